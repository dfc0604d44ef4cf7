#!/usr/bin/env bash
# Installs everything `make demo` and `make test` need on a fresh Debian
# machine. Each piece lives in scripts/setup.d/ and is idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
for s in scripts/setup.d/*.sh; do
	bash "$s"
done

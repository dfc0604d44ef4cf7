#!/usr/bin/env bash
# Installs what `make test` (scripts/setup.sh test, the default) or
# `make demo` (scripts/setup.sh demo) needs on a fresh Debian machine. Each
# piece lives in scripts/setup.d/, is idempotent, and reads ORC_SETUP_FOR to
# skip what the purpose does not need, saying so.
set -euo pipefail
cd "$(dirname "$0")/.."
export ORC_SETUP_FOR=${1:-test}
case $ORC_SETUP_FOR in
test | demo) ;;
*)
	echo "usage: scripts/setup.sh [test|demo]" >&2
	exit 2
	;;
esac
for s in scripts/setup.d/*.sh; do
	bash "$s"
done

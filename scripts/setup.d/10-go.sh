#!/usr/bin/env bash
# Go modules for the whole tree.
set -euo pipefail
go mod download

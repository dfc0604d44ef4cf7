#!/usr/bin/env bash
# nvcc from Debian's non-free component (nvcc 11.8: sm_80 and sm_90). Needed
# to compile emitted CUDA; skipped when an nvcc is already on PATH or under
# CUDA_HOME.
set -euo pipefail
if command -v nvcc >/dev/null 2>&1 || [ -x "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" ]; then
	exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
	echo "setup: nvcc not found; install the CUDA toolkit (Debian: nvidia-cuda-toolkit from non-free)" >&2
	exit 0
fi
src=/etc/apt/sources.list.d/debian.sources
if [ -f "$src" ] && ! grep -q 'non-free' "$src"; then
	sed -i 's/^Components: main$/Components: main contrib non-free non-free-firmware/' "$src"
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends nvidia-cuda-toolkit >/dev/null
nvcc --version | tail -1

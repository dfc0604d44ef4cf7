#!/usr/bin/env bash
# nvcc from Debian's non-free component (nvcc 11.8: sm_80 and sm_90). Needed
# to compile emitted CUDA: by make test always, by make demo only where a GPU
# runs it (else the demo runs on the CPU device). Skipped when an nvcc is
# already on PATH or under CUDA_HOME.
set -euo pipefail
if command -v nvcc >/dev/null 2>&1 || [ -x "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" ]; then
	exit 0
fi
if [ "${ORC_SETUP_FOR:-test}" = demo ] && ! { command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; }; then
	echo "setup: no GPU, so the demo runs on the CPU device: skipped the CUDA toolkit (make test installs it)" >&2
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

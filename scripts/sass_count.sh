#!/usr/bin/env bash
# SASS instructions per kernel of a plan's emitted source, for comparing two
# builds of the same kernels without a GPU (the kernel notes, codegen/cuda/notes,
# quote these counts: whole kernels, loops counted once). Needs nvcc and
# cuobjdump on PATH or in CUDA_HOME; the counts depend on nvcc's version, so
# compare one nvcc's.
#
#   bin/orcc compile model.gguf -o DIR --emit-only
#   bash scripts/sass_count.sh DIR [ARCH] [PATTERN]
#
# ARCH defaults to sm_90, PATTERN (an awk regular expression on the kernel's
# name) to every kernel. Prints "instructions kernel", sorted by name.
set -euo pipefail
dir=${1:?usage: sass_count.sh DIR [ARCH] [PATTERN]}
arch=${2:-sm_90}
pattern=${3:-.}
[ -n "${CUDA_HOME:-}" ] && export PATH=$CUDA_HOME/bin:$PATH
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
nvcc -arch="$arch" -cubin -O3 -std=c++17 -o "$work/k.cubin" "$dir/kernels.cu"
cuobjdump -sass "$work/k.cubin" |
	awk -v pat="$pattern" '/Function : /{name=$3} /^ +\/\*[0-9a-f]+\*\//{if (name ~ pat) n[name]++} END{for (k in n) print n[k], k}' |
	sort -k2

#!/usr/bin/env bash
# Regenerates the transformers goldens of this directory. Runs on the GPU host
# (python3 with torch and transformers; no Go there), from the repository root:
#
#   here:      CGO_ENABLED=1 go build -o .gpu/ref/orcc ./cmd/orcc
#              cp ../shared/testdata/models/stories260k-f32.gguf .gpu/ref/
#   GPU host:  bash testdata/reference/regenerate.sh .gpu/ref/orcc OUTDIR
#
# then copy OUTDIR/*.json into testdata/reference/ and review the diff.
set -euo pipefail
orcc=${1:?usage: regenerate.sh ORCC OUTDIR}
out=${2:?usage: regenerate.sh ORCC OUTDIR}
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PYTHONUNBUFFERED=1
for preset in llama-tiny qwen2.5-0.5b-tiny phi-3-mini-4k-tiny gpt2-small-tiny gpt-oss-20b-tiny; do
	"$orcc" synth --preset "$preset" --quant f32 --seed 1 -o "$work/$preset.gguf"
	python3 scripts/reference_logits.py gguf --gguf "$work/$preset.gguf" --name "$preset" --out "$out/$preset.json"
	rm -f "$work/$preset.gguf"
done
python3 scripts/reference_logits.py stories --gguf .gpu/ref/stories260k-f32.gguf --out "$out/stories260k.json"

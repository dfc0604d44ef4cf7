#!/usr/bin/env bash
# Regenerates the transformers goldens of this directory. Runs on the GPU host
# (python3 with torch and transformers; no Go there), from the repository root:
#
#   here:      CGO_ENABLED=1 go build -o .gpu/ref/orcc ./cmd/orcc
#              cp ../shared/testdata/models/stories260k-f32.gguf .gpu/ref/
#   GPU host:  bash testdata/reference/regenerate.sh .gpu/ref/orcc OUTDIR [PRESET...]
#
# then copy OUTDIR/*.json into testdata/reference/ and review the diff. With
# presets named, only theirs are made (and no stories260k).
set -euo pipefail
orcc=${1:?usage: regenerate.sh ORCC OUTDIR [PRESET...]}
out=${2:?usage: regenerate.sh ORCC OUTDIR [PRESET...]}
shift 2
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PYTHONUNBUFFERED=1
# <preset>.json: the f32 file converted by the script itself (gguf mode), for
# the presets whose checks (compiler/synth/checks.go) include golden-f32.
read -ra f32 <<<"$("$orcc" synth --list --check golden-f32 | tr '\n' ' ')"
# <preset>-q4_k_m.json: the q4_k_m file's --hf-dir export (its weights
# dequantized exactly), loaded by transformers' AutoModelForCausalLM
# (check golden-q4_k_m).
read -ra q4 <<<"$("$orcc" synth --list --check golden-q4_k_m | tr '\n' ' ')"
if [ $# -gt 0 ]; then
	want=" $* "
	keep() { local k=(); for p in "$@"; do [[ $want == *" $p "* ]] && k+=("$p"); done; echo "${k[@]}"; }
	read -ra f32 <<<"$(keep "${f32[@]}")"
	read -ra q4 <<<"$(keep "${q4[@]}")"
fi
for preset in "${f32[@]}"; do
	"$orcc" synth --preset "$preset" --quant f32 --seed 1 -o "$work/$preset.gguf"
	python3 scripts/reference_logits.py gguf --gguf "$work/$preset.gguf" --name "$preset" --out "$out/$preset.json"
	rm -f "$work/$preset.gguf"
done
for preset in "${q4[@]}"; do
	"$orcc" synth --preset "$preset" --quant q4_k_m --seed 1 -o "$work/$preset.gguf" --hf-dir "$work/$preset-hf"
	python3 scripts/reference_logits.py hf --hf-dir "$work/$preset-hf" --gguf "$work/$preset.gguf" \
		--name "$preset-q4_k_m" --out "$out/$preset-q4_k_m.json"
	rm -rf "$work/$preset.gguf" "$work/$preset-hf"
done
if [ $# -eq 0 ]; then
	python3 scripts/reference_logits.py stories --gguf .gpu/ref/stories260k-f32.gguf --out "$out/stories260k.json"
fi

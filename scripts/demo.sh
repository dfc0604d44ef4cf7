#!/usr/bin/env bash
# The main job on embedded defaults: synthesise a tiny Qwen2-architecture
# model with the real Qwen2.5 tokenizer and llama.cpp's Q4_K_M type mix,
# inspect, compile, verify and run it; then compile and run the real trained
# stories260k model. Runs on the GPU when a driver and nvcc are present,
# else on the CPU reference device.
set -euo pipefail
cd "$(dirname "$0")/.."
out=.demo
mkdir -p "$out"
device=cpu
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 &&
	{ command -v nvcc >/dev/null 2>&1 || [ -x "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" ]; }; then
	device=cuda
fi
echo "== device: $device"

echo "== orcc synth: qwen2.5-0.5b-tiny, Q4_K_M"
bin/orcc synth --preset qwen2.5-0.5b-tiny --quant q4_k_m -o "$out/qwen-tiny.gguf" --seed 1 --force
echo "== orcc inspect"
bin/orcc inspect "$out/qwen-tiny.gguf" --ctx 4096
echo "== orcc compile"
bin/orcc compile "$out/qwen-tiny.gguf" -o "$out/qwen-tiny.plan" --device "$device"
bin/orcc verify "$out/qwen-tiny.plan"
echo "== orcrun generate (random weights: the ids are the point, not the text)"
bin/orcrun generate --plan "$out/qwen-tiny.plan" --prompt "Hello, world" --max-tokens 16 --json

echo "== the real trained stories260k model"
bin/orcc compile testdata/models/stories260k-f32.gguf -o "$out/stories.plan" --device "$device"
bin/orcrun generate --plan "$out/stories.plan" --prompt "Once upon a time" --max-tokens 60

#!/usr/bin/env bash
# ncu profile of a whole plan's prefill and decode: every kernel of one
# `orcrun bench` run (warm-up included) with its duration and DRAM bytes, as
# CSV, for the per-kernel tables in BENCHMARKS.md. Run on the GPU host from the
# repository root after `make gpu-bundle`:
#
#   bash scripts/gpu_profile.sh OUTDIR PRESET QUANT [TG]
#
# Writes OUTDIR/PRESET-QUANT.bench.json (timed without the profiler) and
# OUTDIR/PRESET-QUANT.ncu.csv, and its per-kernel table (scripts/ncu_summary.py)
# as OUTDIR/PRESET-QUANT.ncu.md. The clocks are left as the card has them.
set -euo pipefail
out=${1:?usage: gpu_profile.sh OUTDIR PRESET QUANT [TG]}
preset=${2:?preset}
quant=${3:?quant}
tg=${4:-8}
b=${ORC_BUNDLE:-.gpu/bundle}
work=/tmp/orc-profile
mkdir -p "$out" "$work"
export PATH=/usr/local/cuda/bin:$PATH
name=$preset-$quant
[ -f $work/$name.gguf ] || $b/orcc synth --preset "$preset" --quant "$quant" -o $work/$name.gguf >/dev/null
[ -d $work/$name.plan ] || $b/orcc compile $work/$name.gguf -o $work/$name.plan --device cuda >/dev/null
$b/orcrun bench --plan $work/$name.plan --runs 3 --json | tee "$out/$name.bench.json"
ncu --clock-control none --csv --page raw \
	--metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum \
	$b/orcrun bench --plan $work/$name.plan --runs 1 --tg "$tg" >"$out/$name.ncu.csv" 2>"$out/$name.ncu.log"
python3 scripts/ncu_summary.py "$out/$name.ncu.csv" >"$out/$name.ncu.md"

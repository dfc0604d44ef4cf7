#!/usr/bin/env bash
# What each kernel family costs inside the decode graph, overlap with its
# neighbours included (an ablation; ncu serialises kernels and cannot say):
# `orcrun bench` of PLAN as it is and with one family's launches left out of
# the decode graph (ORC_CUDA_SKIP_DECODE, runtime/cuda Options.SkipDecode),
# alternated ROUNDS times (default 3). Prints, per family, the launches left
# out of a step, the median decode time per token and the difference from
# the whole graph, in total and per launch. The outputs of a run with
# launches left out are meaningless: only its time is read. Run on the GPU
# host from the repository root after `make gpu-bundle`:
#
#   bash scripts/gpu_ablation.sh PLAN [FAMILY...]
#
# A family is a kernel-name prefix (default: the decode kernels of the
# llama-like and gpt-oss plans). CTX (default 4096) is bench's --ctx.
set -euo pipefail
plan=${1:?usage: gpu_ablation.sh PLAN [FAMILY...]}
shift
families=${*:-rmsnorm_rows qkv_q8 attend_decode linear_q8 swiglu_q8 moe_logits moe_gate_up_q8 moe_down_sum_q8}
b=${ORC_BUNDLE:-.gpu/bundle}
rounds=${ROUNDS:-3}
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
bench() { # bench FAMILY: one run's decode ms/token (FAMILY "-": the whole graph)
	local skip=
	[ "$1" = - ] || skip=$1
	ORC_CUDA_SKIP_DECODE=$skip $b/orcrun bench --plan "$plan" --ctx "${CTX:-4096}" --runs 2 --pp 16 --json \
		2>"$log/$1.err" | python3 -c 'import json, sys; print(json.load(sys.stdin)["decode_ms_per_token"])'
}
for r in $(seq "$rounds"); do
	for f in - $families; do bench "$f" >>"$log/$f.ms"; done
done
python3 - "$log" $families <<'EOF'
import re, statistics, sys
log, fams = sys.argv[1], sys.argv[2:]
med = lambda f: statistics.median(float(x) for x in open(f"{log}/{f}.ms"))
whole = med("-")
print(f"whole decode graph: {whole:.4f} ms/token (median of {len(open(log + '/-.ms').readlines())})")
print(f"{'family':18} {'launches':>8} {'ms/token':>9} {'cost µs':>8} {'µs/launch':>9}")
for f in fams:
    m = re.search(r"(\d+) of \d+ decode launches left out", open(f"{log}/{f}.err").read())
    n = int(m.group(1)) if m else 0
    if n == 0:
        print(f"{f:18} {'-':>8}   (not in the decode schedule)")
        continue
    t = med(f)
    cost = (whole - t) * 1e3
    print(f"{f:18} {n:8d} {t:9.4f} {cost:8.1f} {cost / n:9.2f}")
EOF

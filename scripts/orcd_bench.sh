#!/usr/bin/env bash
# orcd in front of orcpool on two GPUs against one worker alone, on the GPU
# host: aggregate tokens/s of 64 concurrent streaming clients, and what orcd
# adds to time to first token and to the inter-token gap (orcd bench).
#
#   scripts/orcd_bench.sh PLAN [OUTDIR] [GPUS]
#
# PLAN is a CUDA plan directory (e.g. Qwen2.5-0.5B Q4_K_M from orcc compile),
# GPUS the pool's GPUs (default 0,1). Binaries come from BIN (default
# .gpu/bundle: make gpu-bundle). The direct worker runs on the first GPU,
# beside the pool's; the runs that load them do not overlap.
# REQUESTS (default 1024) and LATENCY_RUNS (128) size the runs.
set -euo pipefail
plan=${1:?usage: scripts/orcd_bench.sh PLAN [OUTDIR] [GPUS]}
out=${2:-orcd-bench}
gpus=${3:-0,1}
bin=${BIN:-.gpu/bundle}
mkdir -p "$out"
export ORC_POOL_TOKEN=${ORC_POOL_TOKEN:-bench-$RANDOM$RANDOM}
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

"$bin/orcd" --port 18090 --artifacts "$out/artifacts.db" 2>"$out/orcd.log" &
pids+=($!)
"$bin/orcpool" --pool-id gpu --plan "$plan" --gpus "$gpus" --orchestrator http://127.0.0.1:18090 \
	--orcrun "$bin/orcrun" --worker-queue 64 2>"$out/orcpool.log" &
pids+=($!)
"$bin/orcrun" serve --plan "$plan" --gpu "${gpus%%,*}" --port 18181 --queue 64 --max-connections 128 2>"$out/direct.log" &
pids+=($!)

workers=$(($(tr -cd , <<<"$gpus" | wc -c) + 1))
for _ in $(seq 600); do
	ready=$(curl -sf http://127.0.0.1:18090/v1/pools/gpu/health | grep -o '"status":"ready"' | wc -l || true)
	direct=$(curl -sf http://127.0.0.1:18181/health >/dev/null && echo 1 || echo 0)
	[ "$ready" -ge "$workers" ] && [ "$direct" = 1 ] && break
	sleep 0.5
done
model=$(curl -sf http://127.0.0.1:18090/v1/models | sed -n 's/.*"id":"\([^"]*\)".*/\1/p')
[ -n "$model" ] || { echo "orcd_bench: the pool did not come up; see $out/*.log" >&2; exit 1; }
echo "== model $model, pool on GPUs $gpus, direct worker on GPU ${gpus%%,*}"
nvidia-smi -L | tee "$out/gpus.txt"
"$bin/orcd" bench --url http://127.0.0.1:18090 --direct http://127.0.0.1:18181 --model "$model" \
	--clients 64 --requests "${REQUESTS:-1024}" --max-tokens 128 --latency-runs "${LATENCY_RUNS:-128}" | tee "$out/bench.txt"
curl -sf http://127.0.0.1:18090/metrics >"$out/orcd-metrics.txt"

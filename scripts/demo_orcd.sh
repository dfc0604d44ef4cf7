#!/usr/bin/env bash
# One request through orcd with two CPU workers: orcd, then orcpool starting
# two orcrun workers on the stories260k plan and registering them, then a
# task streamed over the task API and a completion over the OpenAI API.
set -euo pipefail
cd "$(dirname "$0")/.."
out=.demo/orcd
mkdir -p "$out"
export ORC_POOL_TOKEN=demo-$RANDOM$RANDOM
port=${ORCD_PORT:-18090}
url=http://127.0.0.1:$port
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

# Compiled every time (it takes a moment): a plan left by an earlier release
# may be of another format.
bin/orcc compile testdata/models/stories260k-f32.gguf -o .demo/stories-cpu.plan --device cpu >/dev/null
rm -f "$out/artifacts.db"
echo "== orcd on $url, orcpool with two CPU workers (logs in $out)"
bin/orcd --port "$port" --artifacts "$out/artifacts.db" 2>"$out/orcd.log" &
pids+=($!)
bin/orcpool --pool-id demo --plan .demo/stories-cpu.plan --cpu-workers 2 --orchestrator "$url" 2>"$out/orcpool.log" &
pids+=($!)
for _ in $(seq 200); do
	[ "$(curl -sf "$url/v1/pools/demo/health" | grep -o '"status":"ready"' | wc -l)" = 2 ] && break
	sleep 0.1
done
curl -sf "$url/v1/pools/demo/health"
echo
echo "== POST /v1/tasks, then its stream"
task=$(curl -sf "$url/v1/tasks" -d '{"prompt":"Once upon a time","max_tokens":40,"seed":1}')
echo "$task"
stream=$(sed -n 's/.*"stream":"\([^"]*\)".*/\1/p' <<<"$task")
curl -sfN "$url$stream" | grep -E '^event: (started|metrics|end)|^data: \{"(queue|tokens|predicted)' || true
curl -sfN "$url$stream" | sed -n 's/^data: {"t":"\(.*\)","i":.*/\1/p' | tr -d '\n' | sed 's/\\n/ /g'
echo
echo "== POST /v1/completions (OpenAI), routed by model"
model=$(curl -sf "$url/v1/models" | sed -n 's/.*"id":"\([^"]*\)".*/\1/p')
curl -sf "$url/v1/completions" -d "{\"model\":\"$model\",\"prompt\":\"Once upon a time\",\"max_tokens\":24,\"temperature\":0}"
echo

#!/usr/bin/env bash
# GPU-host acceptance run: everything that needs a GPU or transformers, in one
# call. Build the binaries on a build machine first (make gpu-bundle) and run
# this from the repository root on the GPU host:
#
#   bash scripts/gpu_acceptance.sh OUTDIR [STEP...]
#
# Steps (default: all): harness runtime hf agree sample qwen serve phi3 gptoss full recent. Each writes
# its log to OUTDIR/STEP.log; a summary of what passed goes to
# OUTDIR/summary.txt. ORC_BUNDLE names another bundle directory.
set -uo pipefail
out=${1:?usage: gpu_acceptance.sh OUTDIR [STEP...]}
shift
steps=${*:-harness runtime hf agree sample qwen serve phi3 gptoss full recent}
b=${ORC_BUNDLE:-.gpu/bundle}
work=/tmp/orc-acceptance
mkdir -p "$out" "$work"
export PATH=/usr/local/cuda/bin:$PATH
summary() { echo "$1: $2" | tee -a "$out/summary.txt"; }
presets() { $b/orcc synth --list --check "$1"; } # the presets a check takes (compiler/synth/checks.go)

step_harness() { # the kernel families on the GPU against their CPU references (whole models: agree)
	ORC_GPU=1 $b/codegen.test -test.run GPU -test.skip 'MatchCPU|MatchesCPU|GPUReference' -test.v
}
step_runtime() { # driver layer, graphs, OOM paths, upload integrity, fault injection
	ORC_GPU_TESTS=1 $b/cuda.test -test.run GPU -test.v
}
step_hf() { # the --hf-dir export loads in transformers and equals the committed goldens
	local p
	for p in $(presets golden-f32); do
		$b/orcc synth --force --preset $p --quant f32 --seed 1 -o $work/$p.gguf --hf-dir $work/$p.hf >/dev/null || return 1
		python3 scripts/reference_logits.py hf --hf-dir $work/$p.hf --out $work/$p.hf.json --name $p || return 1
		python3 scripts/reference_logits.py compare testdata/reference/$p.json $work/$p.hf.json || return 1
	done
}
step_agree() { # whole models on the GPU against the CPU device and transformers; every part runs, the step fails if any does
	local p rc=0 ref=$work/reference agree="$b/codegen.test -test.v -test.timeout 20m"
	mkdir -p $ref && cp testdata/reference/*.json $ref/
	# transformers goldens of the f16 tiny presets, made while the GPU works
	for p in $(presets golden-f16); do
		$b/orcc synth --force --preset $p --quant f16 --seed 1 -o $work/$p-f16.gguf 2>/dev/null &&
			python3 scripts/reference_logits.py gguf --gguf $work/$p-f16.gguf --name $p --out $ref/$p-f16.json >$work/$p-f16.ref.log 2>&1 &
	done
	echo "== stories260k: orcrun generate on the GPU (prefill chunks of 4) = transformers' greedy ids"
	{ $b/orcc compile $b/stories260k-f32.gguf -o $work/stories.plan --device cuda --max-tokens 4 &&
		$b/orcrun generate --plan $work/stories.plan --prompt "Once upon a time" --max-tokens 40 --json >$work/stories.json &&
		python3 -c 'import json, sys
got, want = (json.load(open(p)) for p in sys.argv[1:])
print("got ", got["ids"], repr(got["text"]), "\nwant", want["ids"], repr(want["text"]))
sys.exit(got["ids"] != want["ids"])' $work/stories.json testdata/reference/stories260k.json; } || rc=1
	echo "== tiny presets × f16, q4_0, q4_k_m: GPU vs CPU device"
	ORC_GPU=1 $agree -test.run '^TestGPUPresetsMatchCPU$' || rc=1
	wait
	echo "== tiny presets in f32 and f16: GPU vs transformers"
	ORC_GPU=1 ORC_REFERENCE_DIR=$ref $agree -test.run '^TestGPUReference$' || rc=1
	echo "== real widths, fewer layers × f16, q4_0, q4_k_m: GPU vs CPU device"
	ORC_GPU=1 ORC_GPU_FULL=1 $agree -test.run '^TestGPUFullPresetsMatchCPU$' || rc=1
	echo "== gpt-oss: tiny, and 4 layers at real widths, MXFP4: GPU vs CPU device"
	ORC_GPU=1 ORC_GPU_FULL=1 $agree -test.run '^TestGPUMoEMatchesCPU$' || rc=1
	echo "== batched steps: 16 sequences on the GPU vs the CPU device's batch and each alone"
	ORC_GPU=1 $agree -test.run '^TestGPUBatchMatchesCPU$' || rc=1
	return $rc
}
step_full() { # full-size presets on the GPU against transformers directly, 64 greedy steps each (checks full-<quant>)
	local p q n rc=0
	for q in f16 q4_0 q4_k_m; do
		for p in $(presets full-$q); do
			n=$p-$q
			echo "== $n"
			{ $b/orcc synth --force --preset $p --quant $q -o $work/$n.gguf --hf-dir $work/$n.hf >/dev/null &&
				python3 scripts/reference_logits.py hf --hf-dir $work/$n.hf --out $work/$n.ref.json --name $n --steps 64 &&
				ORC_GPU=1 ORC_REF_ONLY=1 ORC_GGUF=$work/$n.gguf ORC_REF_JSON=$work/$n.ref.json \
					$b/codegen.test -test.run '^TestGPUModelFile$' -test.v -test.timeout 10m; } || rc=1
			rm -rf $work/$n.hf $work/$n.gguf
		done
	done
	return $rc
}
model() { # synth + compile a full-size preset (once per host)
	[ -f $work/$1.plan/manifest.bin ] && return 0
	$b/orcc synth --force --preset "$1" --quant "$2" -o $work/$1.gguf >/dev/null &&
		$b/orcc compile $work/$1.gguf -o $work/$1.plan --device cuda
}
step_qwen() { # bench, then GPU sampling against the CPU sampler on the full-size plan
	model qwen2.5-0.5b q4_k_m && $b/orcrun bench --plan $work/qwen2.5-0.5b.plan --runs 3 --json | tee "$out/bench-qwen.json" &&
		ORC_GPU_TESTS=1 ORC_SAMPLE_PLANS=$work/qwen2.5-0.5b.plan $b/cuda.test -test.run 'GPUSampleMatches|GPUSampleTopKPath|GPUGenerateSampled|GPUHeadPicks|GPUDecodeDrawsInGraph' -test.v
}
step_sample() { # the GPU sampler against the CPU's, id for id, and its distribution (100,000 draws a case), small and large vocabulary
	{ [ -f $work/stories.plan/manifest.bin ] || $b/orcc compile $b/stories260k-f32.gguf -o $work/stories.plan --device cuda --max-tokens 4; } &&
		model qwen2.5-0.5b q4_k_m &&
		ORC_GPU_TESTS=1 ORC_SAMPLE_PLANS=$work/stories.plan,$work/qwen2.5-0.5b.plan $b/cuda.test -test.v -test.timeout 20m \
			-test.run 'GPUSampleMatches|GPUSampleTopKPath|GPUSampleDistribution|GPUHeadPicks|GPUGenerateSampled|GPUDecodeDrawsInGraph'
}
step_phi3() {
	model phi-3-mini-4k q4_k_m && $b/orcrun bench --plan $work/phi-3-mini-4k.plan --runs 3 --json | tee "$out/bench-phi3.json"
}
step_gptoss() { # gpt-oss-20b: 2 layers at real widths vs transformers, then the full model's bench at ctx 8192
	local rc=0
	{ $b/orcc synth --force --preset gpt-oss-20b-2l --quant mxfp4 -o $work/gpt-oss-2l.gguf >/dev/null &&
		ORC_GPU=1 ORC_GGUF=$work/gpt-oss-2l.gguf ORC_REF_JSON=testdata/reference/gpt-oss-20b-2l.json \
			$b/codegen.test -test.run '^TestGPUModelFile$' -test.v; } || rc=1
	{ model gpt-oss-20b mxfp4 &&
		$b/orcrun bench --plan $work/gpt-oss-20b.plan --ctx 8192 --runs 3 --json | tee "$out/bench-gptoss.json"; } || rc=1
	return $rc
}
step_recent() { # the full-size presets of the check bench (Q4_K_M) run orcrun bench
	local m rc=0
	for m in $(presets bench); do
		{ model $m q4_k_m && $b/orcrun bench --plan $work/$m.plan --runs 3 --json | tee "$out/bench-$m.json"; } || rc=1
	done
	return $rc
}
step_serve() { # serving on the GPU: the haiku request twice, then latency through HTTP
	[ -d $work/qwen2.5-0.5b.plan ] || model qwen2.5-0.5b q4_k_m || return 1
	$b/orcrun serve --plan $work/qwen2.5-0.5b.plan --port 18080 2>$work/serve.log &
	local pid=$! i
	for i in $(seq 100); do curl -sf localhost:18080/health >/dev/null && break; sleep 0.2; done
	local req='{"job_id":"haiku-N","prompt":"Write a haiku about GPUs","max_tokens":50,"temperature":0.7,"seed":42}'
	curl -sN localhost:18080/execute -d "${req/N/1}" >$work/h1.sse
	curl -sN localhost:18080/execute -d "${req/N/2}" >$work/h2.sse
	grep '^data: {"t"' $work/h1.sse >$work/h1.tok
	grep '^data: {"t"' $work/h2.sse >$work/h2.tok
	echo "haiku tokens: $(wc -l <$work/h1.tok) and $(wc -l <$work/h2.tok)"
	cat $work/h1.sse | tail -3
	local same=1
	cmp -s $work/h1.tok $work/h2.tok || same=0
	echo "identical streams: $same"
	$b/orcrun soak --url http://127.0.0.1:18080 --requests 100 --cancel 10 --disconnect 10 --json | tee "$out/soak-gpu.json"
	curl -s localhost:18080/health
	kill -TERM $pid
	wait $pid
	echo "serve exit: $?"
	[ $same = 1 ]
}

nvidia-smi -L | tee "$out/summary.txt"
for s in $steps; do
	start=$(date +%s)
	if "step_$s" >"$out/$s.log" 2>&1; then r=PASS; else r=FAIL; fi
	summary "$s" "$r in $(($(date +%s) - start)) s"
done

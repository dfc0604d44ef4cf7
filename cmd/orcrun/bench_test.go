package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llama-orch/orc/compiler"
)

// TestBenchCPU runs the real orcrun binary's bench on a CPU plan of the
// stories260k model: load-time child processes, pp, tg and the JSON report.
// (The CUDA path is the same code with a cuda.Device; it runs on the GPU host.)
func TestBenchCPU(t *testing.T) {
	dir := t.TempDir()
	plan := filepath.Join(dir, "plan")
	if err := compiler.Compile(compiler.Options{Model: "../../../shared/testdata/models/stories260k-f32.gguf", Out: plan, Target: "cpu", MaxTokens: 16}); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "orcrun")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "bench", "--plan", plan, "--pp", "40", "--tg", "8", "--prompt", "4", "--runs", "3", "--json").Output()
	if err != nil {
		t.Fatalf("bench: %v\n%s", err, out)
	}
	var r benchResult
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("bench --json printed %q: %v", out, err)
	}
	if r.Model != "tinyllamas-stories-260k" || r.Device != "cpu" || r.Runs != 3 || r.PP != 40 || r.TG != 8 || r.Ctx != 512 || r.KVCache != "f16" {
		t.Errorf("report %+v", r)
	}
	for name, v := range map[string]float64{"load_ms": r.LoadMs, "load_unverified_ms": r.LoadUnverifiedMs,
		"prefill_tok_s": r.PrefillTokS, "ttft_ms": r.TTFTMs, "decode_tok_s": r.DecodeTokS, "first_decode_ms": r.FirstStepMs,
		"decode_logits_ms_per_token": r.DecodeLogitsMsTok} {
		if !(v > 0) {
			t.Errorf("%s = %v, want > 0", name, v)
		}
	}
	if len(r.Sampled) != len(defaultSettings) {
		t.Fatalf("sampled rows %+v, want one per default setting", r.Sampled)
	}
	for i, s := range r.Sampled {
		if s.Setting != defaultSettings[i].Name || !(s.DecodeTokS > 0) || !(s.ServedTokS > 0) || s.ServedTokens < 2 {
			t.Errorf("sampled row %+v", s)
		}
	}
	if r.DecodeGraphMsTok != [2]float64{} {
		t.Errorf("decode_graph_ms_per_token %v on the CPU device, which replays no graph", r.DecodeGraphMsTok)
	}
	if r.TTFTMs < r.PrefillMs {
		t.Errorf("TTFT %.3f ms is shorter than the prefill %.3f ms it contains", r.TTFTMs, r.PrefillMs)
	}
	// The served figures through a batching server, and the prefix figure.
	out, err = exec.Command(bin, "bench", "--plan", plan, "--pp", "40", "--tg", "8", "--prompt", "4", "--runs", "1",
		"--served-slots", "2", "--prefix-ttft", "60", "--temperature", "0.7", "--top-p", "0.9", "--json").Output()
	if err != nil {
		t.Fatalf("bench --served-slots 2: %v\n%s", err, out)
	}
	r = benchResult{}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("bench --json printed %q: %v", out, err)
	}
	if r.ServedSlots != 2 || len(r.Sampled) != 2 || !(r.Sampled[1].ServedTokS > 0) || r.Sampled[1].ServedTokens < 2 {
		t.Errorf("served through 2 slots: %+v", r)
	}
	if p := r.Prefix; p == nil || p.Tokens < 60 || !(p.ColdMs > 0) || !(p.WarmMs > 0) {
		t.Errorf("prefix_ttft %+v, want a cold and a warm time of at least 60 tokens", r.Prefix)
	}
	if out, err = exec.Command(bin, "bench", "--plan", plan, "--runs", "1", "--prefix-ttft", "60").CombinedOutput(); err == nil ||
		!strings.Contains(string(out), "give --served-slots above 1") {
		t.Errorf("--prefix-ttft without --served-slots: %v\n%s", err, out)
	}
	// A context too small for the tests is refused with the numbers.
	out, err = exec.Command(bin, "bench", "--plan", plan, "--pp", "600", "--runs", "1").CombinedOutput()
	if err == nil {
		t.Fatalf("bench with pp 600 over a context of 512 succeeded:\n%s", out)
	}
	if want := "need a context of 600 tokens; the device allows 512"; !strings.Contains(string(out), want) {
		t.Errorf("error %q lacks %q", out, want)
	}
}

// A plan with an 8-bit KV cache says so in bench's report, and in the text
// report's VRAM line.
func TestBenchReportsKVCache(t *testing.T) {
	dir := t.TempDir()
	plan := filepath.Join(dir, "plan")
	if err := compiler.Compile(compiler.Options{Model: "../../../shared/testdata/models/stories260k-f32.gguf", Out: plan, Target: "cpu", MaxTokens: 16, KVCache: "q8"}); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "orcrun")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	args := []string{"bench", "--plan", plan, "--pp", "8", "--tg", "2", "--prompt", "2", "--runs", "1", "--no-served"}
	out, err := exec.Command(bin, append(args, "--json")...).Output()
	if err != nil {
		t.Fatalf("bench: %v\n%s", err, out)
	}
	var r benchResult
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("bench --json printed %q: %v", out, err)
	}
	if r.KVCache != "q8" {
		t.Errorf("kv_cache %q, want q8", r.KVCache)
	}
	if out, err = exec.Command(bin, args...).Output(); err != nil || !strings.Contains(string(out), "weights+arena+KV (q8)") {
		t.Errorf("bench's text report (%v):\n%s", err, out)
	}
}

package main

import (
	"bufio"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/llama-orch/orc/compiler"
	"github.com/llama-orch/orc/internal/cli/clitest"
	"github.com/llama-orch/orc/plans"
)

func TestMain(m *testing.M) { clitest.Main(m, main) }

// storiesPlan compiles stories260k (context 512) for the CPU device.
func storiesPlan(t *testing.T) string {
	t.Helper()
	plan := filepath.Join(t.TempDir(), "plan")
	if err := compiler.Compile(compiler.Options{Model: "../../../shared/testdata/models/stories260k-f32.gguf", Out: plan, Target: "cpu", MaxTokens: 16}); err != nil {
		t.Fatal(err)
	}
	return plan
}

// TestCommandLine feeds orcrun what a new user types, right and wrong, and
// checks the exit status and the one-line answer.
func TestCommandLine(t *testing.T) {
	plan := storiesPlan(t)
	gen := func(args ...string) []string {
		return append([]string{"generate", "--plan", plan, "--prompt", "Once upon a time"}, args...)
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	busyPort := fmt.Sprint(busy.Addr().(*net.TCPAddr).Port)
	long := strings.Repeat("Once upon a time there was a cat. ", 80)

	cases := []clitest.Case{
		{Name: "version", Args: []string{"version"}, Stdout: fmt.Sprintf("orcrun 0.1.0 (reads plan format %d)\n", plans.FormatVersion)},
		{Name: "--version", Args: []string{"--version"}, Stdout: fmt.Sprintf("orcrun 0.1.0 (reads plan format %d)\n", plans.FormatVersion)},
		{Name: "help hides soak", Args: []string{"--help"}, Stdout: "generate", NotOut: "soak"},
		{Name: "api key variable named once", Args: []string{"serve", "--help"}, Stdout: "($ORC_API_KEY)", NotOut: "Prefer ORC_API_KEY"},
		{Name: "missing plan", Args: []string{"generate", "--plan", filepath.Join(plan, "absent"), "--prompt", "hi"}, Code: 2,
			Stderr: "absent: no such file or directory", NotOut: "Usage:"},
		{Name: "negative max tokens", Args: gen("--max-tokens=-100"), Code: 2, Stderr: "--max-tokens: must be at least 1, got -100"},
		{Name: "negative ctx", Args: gen("--ctx=-1"), Code: 2, Stderr: "--ctx -1 is negative (0 means the model's context length)"},
		{Name: "ctx beyond the model", Args: gen("--ctx=100000"), Code: 1, Stderr: "orcrun: --ctx 100000 is above the model's context length 512"},
		{Name: "negative threads", Args: gen("--threads=-1"), Code: 2, Stderr: "--threads -1 is negative (0 means all cores)"},
		{Name: "temperature past float32", Args: gen("--temperature=1e308"), Code: 2, Stderr: "--temperature 1e+308 is out of range"},
		{Name: "temperature out of range", Args: gen("--temperature=5"), Code: 2, Stderr: "sampling: temperature 5 is outside [0, 2]"},
		{Name: "prompt beyond the context", Args: []string{"generate", "--plan", plan, "--prompt", long}, Code: 1,
			Stderr: "tokens; the context holds 512"},
		{Name: "stop at the context", Args: gen("--ctx", "8", "--max-tokens", "100"), Stderr: "3 generated in", Stdout: ", there was\n"},
		{Name: "stop reason context", Args: gen("--ctx", "8", "--max-tokens", "100"), Stderr: "stop: context"},
		{Name: "stop at max tokens", Args: gen("--max-tokens", "2"), Stderr: "stop: max_tokens"},
		{Name: "port out of range", Args: []string{"--plan", plan, "--port=-1"}, Code: 2, Stderr: "--port -1 is outside [0, 65535]"},
		{Name: "port busy, before loading", Args: []string{"--plan", plan, "--port", busyPort}, Code: 1, Logs: true,
			Stderr: "orcrun: --port " + busyPort + ": listen tcp 127.0.0.1:" + busyPort + ": bind: address already in use", NotOut: "model_load_start"},
		{Name: "slots with a plan without a batched step", Args: []string{"--plan", plan, "--device", "cuda", "--slots", "4", "--port", "0"}, Code: 1, Logs: true,
			Stderr: "has no batched step for the cuda device: recompile it with this orcc (orcc compile) to serve --slots above 1, or serve with --slots 1", NotOut: "model_load_start"},
		{Name: "kv bytes without slots", Args: []string{"--plan", plan, "--kv-bytes", "1000000"}, Code: 2, Stderr: "give them with --slots above 1"},
		{Name: "slots beyond the plan's step", Args: []string{"--plan", plan, "--slots", "32", "--port", "0"}, Code: 1, Logs: true,
			Stderr: "orcrun: --slots 32, --prefill-chunk 16: a step holds at most the plan's max_tokens, 16 tokens (orcc compile --max-tokens)"},
		{Name: "kv pool without a block", Args: []string{"--plan", plan, "--slots", "2", "--kv-bytes", "100", "--port", "0"}, Code: 1, Logs: true,
			Stderr: "orcrun: --slots 2, --kv-bytes 100: cpu: a KV pool of 100 bytes holds no block of 16 tokens (20480 bytes)"},
		{Name: "bench batched", Args: []string{"bench", "--plan", plan, "--runs", "1", "--pp", "20", "--tg", "3", "--slots", "3"},
			Stderr: "bench: run 1/1: 3 sequences, pp20 then tg3", Stdout: "|    20 |      3 |    3 |     69 |"},
		{Name: "bench batched beyond the context", Args: []string{"bench", "--plan", plan, "--pp", "500", "--tg", "20", "--slots", "2"}, Code: 1,
			Stderr: "bench: --pp 500 and --tg 20 need a context of 520 tokens; the device allows 512 (--ctx)"},
		{Name: "bench progress", Args: []string{"bench", "--plan", plan, "--runs", "1", "--pp", "8", "--tg", "2", "--prompt", "2"},
			Stderr: "bench: run 1/1: tg2, logits to the host", Stdout: "medians of 1 run after one warm-up"},
		{Name: "bench at depth", Args: []string{"bench", "--plan", plan, "--runs", "1", "--pp", "8", "--tg", "2", "--prompt", "2", "--depth", "20", "--no-served"},
			Stdout: "tok/s tg2 @ depth 20 after a 2-token prompt"},
		{Name: "bench depth past the context", Args: []string{"bench", "--plan", plan, "--runs", "1", "--depth", "600"}, Code: 1,
			Stderr: "the tests need a context of 1112 tokens; the device allows 512"},
		{Name: "bench negative depth", Args: []string{"bench", "--plan", plan, "--depth=-1"}, Code: 1, Stderr: "--depth -1 is negative"},
		{Name: "bench buffers", Args: []string{"bench", "--plan", plan, "--upload-buffers", "1"}, Code: 1, Stderr: "--upload-buffers 1: use 2 to 64"},
	}
	for _, c := range cases {
		c.Check(t)
	}
}

// serve prints one human line once it serves, with the port it got, and
// exits 0 on SIGTERM.
func TestServeSaysWhereItListens(t *testing.T) {
	plan := storiesPlan(t)
	cmd := clitest.Command(t, nil, "--plan", plan, "--port", "0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	cmd.Process.Signal(syscall.SIGTERM)
	werr := cmd.Wait()
	if err != nil || werr != nil {
		t.Fatalf("serve: %v %v", err, werr)
	}
	var port int
	if _, err := fmt.Sscanf(line, "listening on http://127.0.0.1:%d (tinyllamas-stories-260k, cpu)\n", &port); err != nil || port == 0 {
		t.Errorf("serve said %q: %v", line, err)
	}
}

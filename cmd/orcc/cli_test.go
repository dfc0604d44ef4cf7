package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/llama-orch/orc/internal/cli/clitest"
)

func TestMain(m *testing.M) { clitest.Main(m, main) }

// TestCommandLine feeds orcc what a new user types, right and wrong, and
// checks the exit status and the one-line answer.
func TestCommandLine(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "q.gguf")
	data, err := os.ReadFile(shared("models/stories260k-f32.gguf"))
	if err != nil {
		t.Skipf("shared test data: %v", err)
	}
	os.WriteFile(model, data, 0o644)
	mydir := filepath.Join(dir, "mydir")
	os.Mkdir(mydir, 0o755)
	os.WriteFile(filepath.Join(mydir, "notes.txt"), []byte("mine"), 0o644)
	file := filepath.Join(dir, "existing.file")
	os.WriteFile(file, []byte("mine"), 0o644)
	plan := filepath.Join(dir, "plan")
	noNVCC := []string{"PATH=", "CUDA_HOME="}
	if _, err := os.Stat("/usr/local/cuda/bin/nvcc"); err == nil {
		noNVCC = nil // FindNVCC looks there too: the auto case below is skipped
	}

	cases := []clitest.Case{
		{Name: "version", Args: []string{"version"}, Stdout: "orcc 0.1.0\n"},
		{Name: "--version", Args: []string{"--version"}, Stdout: "orcc 0.1.0\n"},
		{Name: "no such command", Args: []string{"compil"}, Code: 2, Stderr: `unexpected argument compil`},
		{Name: "missing model", Args: []string{"compile", filepath.Join(dir, "absent.gguf"), "-o", plan}, Code: 2,
			Stderr: "absent.gguf: no such file or directory", NotOut: "Usage:"},
		{Name: "missing -o", Args: []string{"compile", model}, Code: 2, Stderr: "missing flags: --output=STRING"},
		{Name: "output is the model", Args: []string{"compile", model, "-o", model, "--device", "cpu", "--force"}, Code: 1,
			Stderr: "orcc: compiler: the output " + model + " is the model being compiled"},
		{Name: "output holds other files", Args: []string{"compile", model, "-o", mydir, "--device", "cpu"}, Code: 1,
			Stderr: "orcc: plans: " + mydir + " holds notes.txt, not a plan; --force writes the plan there anyway"},
		{Name: "max tokens beyond the context", Args: []string{"compile", model, "-o", plan, "--device", "cpu", "--max-tokens", "100000"}, Code: 1,
			Stderr: "orcc: compiler: max tokens 100000 is above the model's context length 512"},
		{Name: "synth over a directory", Args: []string{"synth", "--preset", "llama-tiny", "-o", mydir, "--force"}, Code: 1,
			Stderr: "orcc: -o " + mydir + " is a directory; synth writes one GGUF file"},
		{Name: "synth over a file", Args: []string{"synth", "--preset", "llama-tiny", "--output", file}, Code: 1,
			Stderr: "orcc: -o " + file + " exists; --force replaces it"},
		{Name: "inspect negative ctx", Args: []string{"inspect", model, "--ctx=-5"}, Code: 2,
			Stderr: "--ctx -5 is negative (0 means the model's context length)"},
		{Name: "inspect json in snake_case", Args: []string{"inspect", model, "--json"}, Stdout: `"n_layer": 5,`, NotOut: "NLayer"},
		{Name: "tokenize without a source", Args: []string{"tokenize", "hi"}, Code: 2, Stderr: "give --model FILE.gguf or --tokenizer tokenizer.json"},
		{Name: "tokenize usage shows alternatives", Args: []string{"tokenize", "--help"}, Stdout: "Usage: orcc tokenize [<text>] [flags]"},
		{Name: "launches of a CPU plan", Args: []string{"compile", model, "-o", plan, "--device", "cpu", "--launches"}, Code: 1,
			Stderr: "orcc: --launches lists a CUDA plan's decode schedule: it needs --device cuda and no --emit-only"},
		{Name: "compile's output flag", Args: []string{"compile", "--help"}, Stdout: "-o, --output=STRING"},
		{Name: "synth's output flag", Args: []string{"synth", "--help"}, Stdout: "-o, --output=STRING"},
		{Name: "compile", Args: []string{"compile", model, "-o", plan, "--device", "cpu"}, Stdout: "wrote plan " + plan + " (llama F32, target cpu): 48 weights"},
		{Name: "verify, one file", Args: []string{"verify", plan}, Stdout: "48 tensors, 1171200 weight bytes, 1 file verified\n"},
	}
	if noNVCC != nil {
		auto := filepath.Join(dir, "auto")
		cases = append(cases, clitest.Case{Name: "device auto without nvcc", Args: []string{"compile", model, "-o", auto}, Env: noNVCC,
			Stderr: "orcc: --device auto: no nvcc on PATH or under $CUDA_HOME/bin, so compiling for the CPU reference device", Stdout: "target cpu"})
	}
	for _, c := range cases {
		c.Check(t)
	}
	if b, _ := os.ReadFile(file); string(b) != "mine" {
		t.Errorf("existing.file now %q", b)
	}
	if entries, _ := os.ReadDir(mydir); len(entries) != 1 {
		t.Errorf("mydir now holds %v", entries)
	}
}

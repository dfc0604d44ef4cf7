package compiler

import (
	"errors"
	"github.com/llama-orch/orc/compiler/arch"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llama-orch/orc/plans"
	"github.com/llama-orch/orc/tokenizer"
)

func TestCompileErrors(t *testing.T) {
	dir := t.TempDir()
	notGGUF := filepath.Join(dir, "not.gguf")
	if err := os.WriteFile(notGGUF, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "plan")
	cases := []struct {
		name string
		o    Options
		want string
	}{
		{"no output", Options{Model: stories, Target: "cpu", MaxTokens: 8}, "no output directory"},
		{"missing file", Options{Model: filepath.Join(dir, "absent.gguf"), Out: out, Target: "cpu", MaxTokens: 8}, "absent.gguf"},
		{"not gguf", Options{Model: notGGUF, Out: out, Target: "cpu", MaxTokens: 8}, "GGUF"},
		{"bad target", Options{Model: stories, Out: out, Target: "tpu", MaxTokens: 8}, "unknown target"},
		{"bad max tokens", Options{Model: stories, Out: out, Target: "cpu", MaxTokens: -1}, "max tokens"},
		{"bad dump pass", Options{Model: stories, Out: out, Target: "cpu", MaxTokens: 8, DumpAfter: "nope", Dump: os.Stderr}, "not a pass"},
		{"bad tokenizer", Options{Model: stories, Out: out, Target: "cpu", MaxTokens: 8, Tokenizer: notGGUF}, "not.gguf"},
		// Qwen2.5's 151k-token tokenizer.json cannot serve stories' 512 rows.
		{"tokenizer too big", Options{Model: stories, Out: out, Target: "cpu", MaxTokens: 8,
			Tokenizer: "../../shared/testdata/tokenizers/qwen2.5/tokenizer.json"}, "vocabulary rows"},
	}
	for _, c := range cases {
		err := Compile(c.o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one mentioning %q", c.name, err, c.want)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a failed compile left %s behind (%v)", out, err)
	}
}

// Compile never replaces its own model, even with Force, nor a directory of
// other files without it; both are refused before any work, untouched.
func TestCompileKeepsUserFiles(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "q.gguf")
	data, err := os.ReadFile(stories)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(model, data, 0o644); err != nil {
		t.Fatal(err)
	}
	err = Compile(Options{Model: model, Out: model, Target: "cpu", MaxTokens: 8, Force: true})
	if err == nil || !strings.Contains(err.Error(), "is the model being compiled") {
		t.Errorf("-o the model: %v", err)
	}
	if after, err := os.ReadFile(model); err != nil || len(after) != len(data) {
		t.Errorf("the model changed: %d bytes, %v", len(after), err)
	}
	mydir := filepath.Join(dir, "mydir")
	os.Mkdir(mydir, 0o755)
	if err := os.WriteFile(filepath.Join(mydir, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, emitOnly := range []bool{false, true} {
		err = Compile(Options{Model: model, Out: mydir, Target: "sm_90", MaxTokens: 8, EmitOnly: emitOnly})
		if !errors.Is(err, plans.ErrOccupied) || !strings.Contains(err.Error(), mydir) {
			t.Errorf("-o a directory of other files (emit only %v): %v", emitOnly, err)
		}
	}
	if entries, _ := os.ReadDir(mydir); len(entries) != 1 {
		t.Errorf("mydir now holds %v", entries)
	}
}

// TestEmitOnly: --emit-only writes the CUDA source alone, without nvcc.
func TestEmitOnly(t *testing.T) {
	out := filepath.Join(t.TempDir(), "src")
	if err := Compile(Options{Model: stories, Out: out, Target: "sm_90", MaxTokens: 16, EmitOnly: true}); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != plans.SourceFile {
		t.Fatalf("--emit-only wrote %v, want just %s", entries, plans.SourceFile)
	}
	src, err := os.ReadFile(filepath.Join(out, plans.SourceFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), "__global__") {
		t.Error("the source has no kernel")
	}
}

// TestCompileTokenizerJSON: --tokenizer stores tokenizer.json's vocabulary
// in the plan instead of the GGUF's.
func TestCompileTokenizerJSON(t *testing.T) {
	model := synthModel(t, "qwen2.5-0.5b-tiny", "")
	for _, c := range []struct{ json, kind string }{
		{"", tokenizer.KindGGUF},
		{"../../shared/testdata/tokenizers/qwen2.5/tokenizer.json", tokenizer.KindHFJSON},
	} {
		out := filepath.Join(t.TempDir(), "plan")
		if err := Compile(Options{Model: model, Out: out, Target: "cpu", MaxTokens: 8, Tokenizer: c.json}); err != nil {
			t.Fatal(err)
		}
		p, err := plans.Open(out, plans.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		spec, err := tokenizer.UnmarshalSpec(p.Manifest.Tokenizer)
		p.Close()
		if err != nil {
			t.Fatal(err)
		}
		if spec.Kind != c.kind {
			t.Errorf("tokenizer %q: plan's tokenizer kind %q, want %q", c.json, spec.Kind, c.kind)
		}
	}
}

// A plan's prefill step without --max-tokens: 512, 2048 for a mixture of
// experts, never past the model's context.
func TestDefaultMaxTokens(t *testing.T) {
	for _, c := range []struct {
		h    arch.Hparams
		want int
	}{
		{arch.Hparams{NCtx: 32768}, 512},
		{arch.Hparams{NCtx: 131072, NExpert: 32, NExpertUsed: 4}, 2048},
		{arch.Hparams{NCtx: 1024, NExpert: 4, NExpertUsed: 2}, 1024},
		{arch.Hparams{NCtx: 256}, 256},
		{arch.Hparams{}, 512},
	} {
		if got := DefaultMaxTokens(c.h); got != c.want {
			t.Errorf("DefaultMaxTokens(ctx %d, experts %d) = %d, want %d", c.h.NCtx, c.h.NExpert, got, c.want)
		}
	}
}

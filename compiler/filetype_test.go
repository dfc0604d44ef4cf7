package compiler

import (
	"path/filepath"
	"testing"

	"github.com/llama-orch/orc/compiler/synth"
	"github.com/llama-orch/orc/gguf"
	"github.com/llama-orch/orc/plans"
)

// compiledFileType compiles model for the CPU and returns the plan's
// Model.FileType, what /health reports as quant_kind.
func compiledFileType(t *testing.T, model string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "plan")
	if err := Compile(Options{Model: model, Out: dir, Target: "cpu", MaxTokens: 8}); err != nil {
		t.Fatal(err)
	}
	p, err := plans.Open(dir, plans.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	return p.Manifest.Model.FileType
}

// withoutKey rewrites a GGUF file without one metadata key.
func withoutKey(t *testing.T, path, key string) string {
	t.Helper()
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, ok := f.Uint(key); !ok {
		t.Fatalf("%s has no %s to remove", path, key)
	}
	w := gguf.NewWriter()
	for _, kv := range f.KVs {
		if kv.Key != key {
			w.Set(kv.Key, kv.Value)
		}
	}
	for i := range f.Tensors {
		ti := &f.Tensors[i]
		if err := w.AddTensorBytes(ti.Name, ti.Type, ti.Dims, f.Data(ti)); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "stripped.gguf")
	if err := w.WriteFile(out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestFileTypeFromMetadata: general.file_type, when present, names the plan's
// file type.
func TestFileTypeFromMetadata(t *testing.T) {
	if got := compiledFileType(t, synthModel(t, "llama-tiny", synth.QuantQ4_0)); got != "Q4_0" {
		t.Errorf("llama-tiny q4_0: file type %q, want Q4_0", got)
	}
}

// TestFileTypeGuessed: a file without general.file_type gets llama.cpp's
// guess: stories260k (GGUF v1, all F32) is "F32"; a gpt-oss MXFP4 file is
// MXFP4_MOE although its Q8_0 attention matrices and F32 vectors outnumber
// the MXFP4 experts.
func TestFileTypeGuessed(t *testing.T) {
	if got := compiledFileType(t, stories); got != "F32" {
		t.Errorf("stories260k: file type %q, want F32", got)
	}
	oss := withoutKey(t, synthModel(t, "gpt-oss-20b-tiny", synth.QuantMXFP4), "general.file_type")
	if got := compiledFileType(t, oss); got != "MXFP4_MOE" {
		t.Errorf("gpt-oss-20b-tiny mxfp4 without general.file_type: file type %q, want MXFP4_MOE", got)
	}
}

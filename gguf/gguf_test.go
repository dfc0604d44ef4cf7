package gguf

import (
	"bytes"
	"path/filepath"
	"slices"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	for _, ver := range []uint32{1, 2, 3} {
		w := NewWriter()
		w.Version = ver
		w.Set("general.architecture", "llama")
		w.Set("llama.block_count", uint32(2))
		w.Set("x.f", float32(1.5))
		w.Set("x.tokens", []string{"a", "bb", ""})
		w.Set("x.ids", []int32{-1, 7})
		data := make([]byte, Q4_0.RowBytes(64))
		for i := range data {
			data[i] = byte(i)
		}
		if err := w.AddTensorBytes("t0", Q4_0, []uint64{64, 1}, data); err != nil {
			t.Fatal(err)
		}
		if err := w.AddTensorBytes("t1", F32, []uint64{3}, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if _, err := w.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		f, err := Parse(buf.Bytes())
		if err != nil {
			t.Fatalf("v%d: %v", ver, err)
		}
		if f.Version != ver {
			t.Fatalf("version %d", f.Version)
		}
		if a, _ := f.Architecture(); a != "llama" {
			t.Fatalf("arch %q", a)
		}
		if n, _ := f.Uint("llama.block_count"); n != 2 {
			t.Fatalf("block_count %d", n)
		}
		if s, _ := f.Strings("x.tokens"); len(s) != 3 || s[1] != "bb" {
			t.Fatalf("tokens %v", s)
		}
		if ids, _ := f.Ints("x.ids"); len(ids) != 2 || ids[0] != -1 {
			t.Fatalf("ids %v", ids)
		}
		ti, ok := f.Tensor("t0")
		if !ok || !bytes.Equal(f.Data(ti), data) {
			t.Fatalf("t0 data mismatch")
		}
		ti, _ = f.Tensor("t1")
		if ti.Offset%32 != 0 || f.Data(ti)[11] != 12 {
			t.Fatalf("t1 bad")
		}
	}
}

// TestRealFiles parses every GGUF in the shared test data: a v1 model, a v3
// model with F16 tensors and three vocab-only v3 files.
func TestRealFiles(t *testing.T) {
	cases := []struct {
		path         string
		version      uint32
		arch         string
		tensors, kvs int
		firstTensor  string
		firstType    Type
		firstDims    []uint64
	}{
		{"models/stories260k-f32.gguf", 1, "llama", 48, 18, "token_embd.weight", F32, []uint64{64, 512}},
		{"models/llama-2-tiny-random.gguf", 3, "llama", 12, 18, "token_embd.weight", F16, []uint64{8, 32000}},
		{"vocab/ggml-vocab-gpt-2.gguf", 3, "gpt2", 0, 16, "", 0, nil},
		{"vocab/ggml-vocab-llama-spm.gguf", 3, "llama", 0, 22, "", 0, nil},
		{"vocab/ggml-vocab-phi-3.gguf", 3, "phi3", 0, 26, "", 0, nil},
	}
	for _, c := range cases {
		f, err := Open(filepath.Join("..", "..", "shared", "testdata", c.path))
		if err != nil {
			t.Fatal(err)
		}
		arch, err := f.Architecture()
		if err != nil || arch != c.arch || f.Version != c.version || len(f.Tensors) != c.tensors || len(f.KVs) != c.kvs {
			t.Errorf("%s: v%d arch %q (%v), %d tensors, %d kvs; want v%d %q %d %d", c.path, f.Version, arch, err, len(f.Tensors), len(f.KVs), c.version, c.arch, c.tensors, c.kvs)
		}
		if toks, ok := f.Strings("tokenizer.ggml.tokens"); !ok || len(toks) < 256 {
			t.Errorf("%s: tokenizer.ggml.tokens has %d entries", c.path, len(toks))
		}
		if c.tensors > 0 {
			ti := f.Tensors[0]
			if ti.Name != c.firstTensor || ti.Type != c.firstType || !slices.Equal(ti.Dims, c.firstDims) {
				t.Errorf("%s: first tensor %s %s %v", c.path, ti.Name, ti.Type, ti.Dims)
			}
			for i := range f.Tensors {
				if d := f.Data(&f.Tensors[i]); uint64(len(d)) != f.Tensors[i].Bytes() {
					t.Errorf("%s: %s: %d data bytes", c.path, f.Tensors[i].Name, len(d))
				}
			}
		}
		f.Close()
	}
}

package gguf

import (
	"bytes"
	"errors"
	"path/filepath"
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

func TestRealFiles(t *testing.T) {
	for _, name := range []string{"models/stories260k-f32.gguf", "models/llama-2-tiny-random.gguf", "vocab/ggml-vocab-gpt-2.gguf"} {
		f, err := Open(filepath.Join("..", "..", "shared", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Architecture(); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
}

func TestTruncations(t *testing.T) {
	w := NewWriter()
	w.Set("general.architecture", "llama")
	w.AddTensorBytes("t", F32, []uint64{4}, make([]byte, 16))
	var buf bytes.Buffer
	w.WriteTo(&buf)
	full := buf.Bytes()
	f, err := Parse(full)
	if err != nil {
		t.Fatal(err)
	}
	end := int(f.DataOffset) + 16 // trailing alignment padding is optional
	for n := 0; n < end; n++ {
		if _, err := Parse(full[:n]); err == nil {
			t.Fatalf("truncation to %d bytes parsed", n)
		} else if !errors.Is(err, ErrMalformed) {
			t.Fatalf("truncation to %d: error %v is not ErrMalformed", n, err)
		}
	}
}

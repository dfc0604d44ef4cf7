package main

import (
	"path/filepath"
	"testing"

	"github.com/llama-orch/orc/compiler/synth"
)

func shared(name string) string { return filepath.Join("..", "..", "..", "shared", "testdata", name) }

// inspect reads all four shared GGUF files (v1 and v3, with tensors and
// vocab-only) with the right figures.
func TestInspectSharedFiles(t *testing.T) {
	stories, err := inspect(shared("models/stories260k-f32.gguf"), 0)
	if err != nil {
		t.Skipf("shared test data: %v", err)
	}
	// 5 layers · 4 KV heads · head dim 8 · K and V · 2 bytes = 640 bytes a token.
	if stories.GGUFVersion != 1 || stories.Architecture != "llama" || stories.TensorTypes["F32"] != 48 ||
		stories.Ctx != 512 || stories.KVCacheBytes != 640*512 || stories.FileType != "F32 (guessed from the tensor types)" || !stories.TensorsBound {
		t.Errorf("stories260k: %+v", stories)
	}
	// 4 bytes a parameter, all F32.
	if stories.WeightBytes != 4*stories.Params || stories.VRAMBytes != int64(stories.WeightBytes)+stories.KVCacheBytes {
		t.Errorf("stories260k sizes: %+v", stories)
	}
	tiny, err := inspect(shared("models/llama-2-tiny-random.gguf"), 100)
	if err != nil {
		t.Fatal(err)
	}
	// dim 8, 1 layer, vocab 32000: 2·32000·8 + 4·64 + 3·8·32 + 3·8 parameters.
	if tiny.Params != 2*32000*8+4*64+3*8*32+3*8 || tiny.TensorTypes["F16"] != 9 || tiny.TensorTypes["F32"] != 3 ||
		tiny.FileType != "F16" || tiny.KVCacheBytes != 2*1*2*4*2*100 {
		t.Errorf("llama-2-tiny-random: %+v", tiny)
	}
	for _, name := range []string{"vocab/ggml-vocab-gpt-2.gguf", "vocab/ggml-vocab-phi-3.gguf", "vocab/ggml-vocab-llama-spm.gguf"} {
		r, err := inspect(shared(name), 0)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if r.Tensors != 0 || r.TensorsBound || r.VocabOnlyNote == "" || r.KVCacheBytes <= 0 {
			t.Errorf("%s: %+v", name, r)
		}
	}
}

func TestInspectSynthetic(t *testing.T) {
	p, err := synth.Lookup("phi-3-mini-4k-tiny")
	if err != nil {
		t.Fatal(err)
	}
	m, err := synth.Plan(p, synth.QuantQ4KM)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "phi3.gguf")
	if err := m.WriteFile(path, 1); err != nil {
		t.Fatal(err)
	}
	r, err := inspect(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if r.FileType != "Q4_K_M" || r.Architecture != "phi3" || r.Tensors != len(m.Tensors) || int64(r.Params) != m.Params ||
		r.TensorTypes["Q5_K"] != 2 || r.Hparams.SlidingWindow != 2047 {
		t.Errorf("%+v", r)
	}
}

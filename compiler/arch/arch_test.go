package arch

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llama-orch/orc/gguf"
)

func shared(name string) string {
	return filepath.Join("..", "..", "..", "shared", "testdata", name)
}

func open(t *testing.T, name string) *gguf.File {
	t.Helper()
	f, err := gguf.Open(shared(name))
	if err != nil {
		t.Skipf("shared test data not available: %v", err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestStories260K(t *testing.T) {
	f := open(t, "models/stories260k-f32.gguf")
	m, err := Load(f)
	if err != nil {
		t.Fatal(err)
	}
	h := m.H
	if h.Arch != "llama" || h.NLayer != 5 || h.NEmbd != 64 || h.NHead != 8 || h.NHeadKV != 4 || h.HeadDim != 8 ||
		h.NFF != 172 || h.NVocab != 512 || h.NCtx != 512 || h.RopeMode != RopeNormal || h.RopeDims != 8 || h.RopeBase != 10000 {
		t.Errorf("hparams %+v", h)
	}
	w := m.Weights.(*Llama)
	if len(w.Layers) != 5 || w.Layers[4].FFNDown == nil || w.Layers[4].FFNDown.Dims[0] != 172 || w.Layers[0].AttnQBias != nil {
		t.Errorf("layers not bound: %+v", w.Layers[4])
	}
	if w.Output == nil || h.TiedOutput {
		t.Errorf("stories260k has output.weight")
	}
	if got := h.KVBytesPerToken(); got != 2*5*4*8*2 {
		t.Errorf("KV bytes per token %d", got)
	}
}

func TestLlama2TinyRandom(t *testing.T) {
	m, err := Load(open(t, "models/llama-2-tiny-random.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	if m.H.NEmbd != 8 || m.H.NVocab != 32000 || m.H.HeadDim != 4 || m.H.RopeDims != 4 || m.H.FileType != 1 {
		t.Errorf("hparams %+v", m.H)
	}
}

// Vocab-only files have hyperparameters but no tensors: ReadHparams works,
// Load says why it cannot bind.
func TestVocabOnly(t *testing.T) {
	for name, want := range map[string]Hparams{
		"vocab/ggml-vocab-gpt-2.gguf":     {Arch: "gpt2", NLayer: 12, NEmbd: 768, NHead: 12, NHeadKV: 12, HeadDim: 64, NVocab: 50257, NCtx: 1024, Norm: LayerNorm, RopeMode: RopeNone},
		"vocab/ggml-vocab-phi-3.gguf":     {Arch: "phi3", NLayer: 32, NEmbd: 3072, NHead: 32, NHeadKV: 32, HeadDim: 96, NVocab: 32064, NCtx: 4096, RopeMode: RopeNeoX},
		"vocab/ggml-vocab-llama-spm.gguf": {Arch: "llama", NLayer: 32, NEmbd: 4096, NHead: 32, NHeadKV: 32, HeadDim: 128, NVocab: 32000, NCtx: 4096, RopeMode: RopeNormal},
	} {
		f := open(t, name)
		_, h, err := ReadHparams(f)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if h.Arch != want.Arch || h.NLayer != want.NLayer || h.NEmbd != want.NEmbd || h.NHead != want.NHead ||
			h.NHeadKV != want.NHeadKV || h.HeadDim != want.HeadDim || h.NVocab != want.NVocab || h.NCtx != want.NCtx ||
			h.Norm != want.Norm || h.RopeMode != want.RopeMode {
			t.Errorf("%s: %+v", name, h)
		}
		if name == "vocab/ggml-vocab-phi-3.gguf" && (h.Scaling.OrigCtx != 4096 || h.Scaling.Type != "" || h.Scaling.Factor != 1) {
			t.Errorf("phi-3 rope scaling %+v", h.Scaling)
		}
		if _, err := Load(f); err == nil || !strings.Contains(err.Error(), "no tensors") {
			t.Errorf("%s: Load error %v", name, err)
		}
	}
}

// fileWith builds an in-memory GGUF with the given metadata and tensors.
func fileWith(t *testing.T, kvs map[string]any, tensors map[string][]uint64) *gguf.File {
	t.Helper()
	w := gguf.NewWriter()
	for k, v := range kvs {
		w.Set(k, v)
	}
	for name, dims := range tensors {
		ti := gguf.TensorInfo{Dims: dims, Type: gguf.F32}
		if err := w.AddTensorBytes(name, gguf.F32, dims, make([]byte, ti.Bytes())); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func gptossKVs() map[string]any {
	return map[string]any{
		"general.architecture": "gpt-oss", "gpt-oss.block_count": uint32(2), "gpt-oss.context_length": uint32(4096),
		"gpt-oss.embedding_length": uint32(96), "gpt-oss.feed_forward_length": uint32(64),
		"gpt-oss.attention.head_count": uint32(4), "gpt-oss.attention.head_count_kv": uint32(2),
		"gpt-oss.attention.key_length": uint32(32), "gpt-oss.attention.layer_norm_rms_epsilon": float32(1e-5),
		"gpt-oss.rope.freq_base": float32(150000), "gpt-oss.expert_count": uint32(4), "gpt-oss.expert_used_count": uint32(2),
		"gpt-oss.attention.sliding_window": uint32(128), "gpt-oss.rope.scaling.type": "yarn",
		"gpt-oss.rope.scaling.factor": float32(32), "gpt-oss.rope.scaling.original_context_length": uint32(4096),
		"tokenizer.ggml.tokens": []string{"a", "b", "c"},
	}
}

func TestGPTOSSHparams(t *testing.T) {
	_, h, err := ReadHparams(fileWith(t, gptossKVs(), nil))
	if err != nil {
		t.Fatal(err)
	}
	if h.HeadDim != 32 || h.RopeDims != 32 || h.NExpert != 4 || h.NExpertUsed != 2 || h.ExpertFF != 64 ||
		h.Scaling.Type != "yarn" || h.Scaling.Factor != 32 || h.Scaling.OrigCtx != 4096 || h.Scaling.BetaFast != 32 || h.Scaling.BetaSlow != 1 {
		t.Errorf("hparams %+v", h)
	}
	if !h.IsSWA(0) || h.IsSWA(1) || !h.IsSWA(2) {
		t.Error("gpt-oss slides on even layers")
	}
	if h.NVocab != 3 {
		t.Errorf("vocab %d from the token list", h.NVocab)
	}
}

func TestErrors(t *testing.T) {
	cases := []struct {
		name    string
		edit    func(map[string]any)
		tensors map[string][]uint64
		want    string
	}{
		{"unknown arch", func(kv map[string]any) { kv["general.architecture"] = "mamba" }, nil, "supported: gemma3, gpt-oss, gpt2, llama, phi3, qwen2, qwen3, qwen3moe"},
		{"no arch", func(kv map[string]any) { delete(kv, "general.architecture") }, nil, "general.architecture"},
		{"missing key", func(kv map[string]any) { delete(kv, "gpt-oss.block_count") }, nil, "gpt-oss.block_count is missing"},
		{"string count", func(kv map[string]any) { kv["gpt-oss.embedding_length"] = "96" }, nil, "gpt-oss.embedding_length"},
		{"bad gqa", func(kv map[string]any) { kv["gpt-oss.attention.head_count_kv"] = uint32(3) }, nil, "head_count_kv"},
		{"huge layer count", func(kv map[string]any) { kv["gpt-oss.block_count"] = uint32(1 << 30) }, nil, "block_count 1073741824 exceeds"},
		{"bad experts", func(kv map[string]any) { kv["gpt-oss.expert_used_count"] = uint32(5) }, nil, "expert_used_count"},
		{"missing tensor", func(map[string]any) {}, map[string][]uint64{"token_embd.weight": {96, 3}}, "required tensor blk.0.attn_norm.weight is missing"},
		{"bad shape", func(map[string]any) {}, map[string][]uint64{"token_embd.weight": {96, 4}}, "token_embd.weight has shape [96 4]"},
	}
	for _, c := range cases {
		kv := gptossKVs()
		c.edit(kv)
		f := fileWith(t, kv, c.tensors)
		var err error
		if c.tensors == nil {
			_, _, err = ReadHparams(f)
		} else {
			_, err = Load(f)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to mention %q", c.name, err, c.want)
		}
	}
}

// Every tag of every architecture parses and names distinct tensors.
func TestTensorTags(t *testing.T) {
	h := &Hparams{NLayer: 3, NEmbd: 64, NHead: 4, NHeadKV: 2, HeadDim: 16, NFF: 128, NVocab: 100, NCtx: 32, RopeDims: 16, NExpert: 4, ExpertFF: 32}
	for _, name := range Supported() {
		a, _ := Lookup(name)
		specs, err := Tensors(a.NewWeights(h.NLayer), h)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		seen := map[string]bool{}
		for _, s := range specs {
			if seen[s.Name] {
				t.Errorf("%s: %s named twice", name, s.Name)
			}
			seen[s.Name] = true
		}
		if !seen["blk.2.attn_norm.weight"] || !seen["token_embd.weight"] || !seen["output_norm.weight"] {
			t.Errorf("%s: specs %v", name, seen)
		}
	}
}

// Every tensor field of every architecture names a role the lowering reads,
// and every architecture declares an FFN the lowering has a form for.
func TestRolesCoverEveryField(t *testing.T) {
	h := &Hparams{NLayer: 2}
	for _, name := range Supported() {
		a, _ := Lookup(name)
		m := &Model{Arch: a, H: Hparams{Arch: name, NLayer: h.NLayer}, Weights: a.NewWeights(h.NLayer)}
		r, err := m.Roles()
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if len(r.Layers) != h.NLayer {
			t.Errorf("%s: %d layer roles", name, len(r.Layers))
		}
		if (a.Compute.FFN == FFNExperts) != (a.Compute.Experts != nil) {
			t.Errorf("%s: FFN %d with experts %v", name, a.Compute.FFN, a.Compute.Experts)
		}
	}
	type stray struct {
		TokenEmbd *gguf.TensorInfo
		Mystery   *gguf.TensorInfo
	}
	m := &Model{H: Hparams{Arch: "test"}, Weights: &stray{}}
	if _, err := m.Roles(); err == nil || !strings.Contains(err.Error(), "stray.Mystery names no tensor role") {
		t.Errorf("a field without a role: %v", err)
	}
}

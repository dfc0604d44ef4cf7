package synth

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/llama-orch/orc/compiler/arch"
	"github.com/llama-orch/orc/gguf"
	"github.com/llama-orch/orc/quant"
)

// safetensors is a parsed model.safetensors (F32 and BF16 entries).
type safetensors struct {
	header map[string]struct {
		Dtype   string  `json:"dtype"`
		Shape   []int   `json:"shape"`
		Offsets []int64 `json:"data_offsets"`
	}
	data []byte
}

func readSafetensors(t *testing.T, path string) *safetensors {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := binary.LittleEndian.Uint64(raw)
	var h map[string]json.RawMessage
	if err := json.Unmarshal(raw[8:8+n], &h); err != nil {
		t.Fatal(err)
	}
	st := &safetensors{data: raw[8+n:]}
	delete(h, "__metadata__")
	if err := json.Unmarshal(mustJSON(t, h), &st.header); err != nil {
		t.Fatal(err)
	}
	var end int64
	for name, e := range st.header {
		size := map[string]int64{"F32": 4, "BF16": 2}[e.Dtype]
		if size == 0 {
			t.Fatalf("%s: dtype %s", name, e.Dtype)
		}
		for _, d := range e.Shape {
			size *= int64(d)
		}
		if e.Offsets[1]-e.Offsets[0] != size {
			t.Fatalf("%s: %d bytes for shape %v", name, e.Offsets[1]-e.Offsets[0], e.Shape)
		}
		end = max(end, e.Offsets[1])
	}
	if end != int64(len(st.data)) {
		t.Fatalf("data is %d bytes, tensors end at %d", len(st.data), end)
	}
	return st
}

func mustJSON(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// at returns element idx (row-major) of tensor name.
func (s *safetensors) at(t *testing.T, name string, idx ...int) float32 {
	e, ok := s.header[name]
	if !ok {
		t.Fatalf("no tensor %s", name)
	}
	off := 0
	for i, d := range e.Shape {
		off = off*d + idx[i]
	}
	if e.Dtype == "BF16" {
		return math.Float32frombits(uint32(binary.LittleEndian.Uint16(s.data[e.Offsets[0]+int64(2*off):])) << 16)
	}
	return math.Float32frombits(binary.LittleEndian.Uint32(s.data[e.Offsets[0]+int64(4*off):]))
}

// ggufAt returns element (row, col) of a GGUF tensor, rows counted over all
// outer dims.
func ggufAt(t *testing.T, f *gguf.File, name string, row, col uint64) float32 {
	ti, ok := f.Tensor(name)
	if !ok {
		t.Fatalf("no GGUF tensor %s", name)
	}
	rb := uint64(ti.Type.RowBytes(int64(ti.Dims[0])))
	vals := make([]float32, ti.Dims[0])
	if err := quant.Dequantize(ti.Type, f.Data(ti)[row*rb:(row+1)*rb], vals); err != nil {
		t.Fatal(err)
	}
	return vals[col]
}

// exportTiny synthesises a tiny preset and exports it. The big real
// vocabularies of qwen2 and gpt-oss (150-200K rows) only cost test time
// here, so those get Llama-2's 32000-token vocabulary.
func exportTiny(t *testing.T, preset string) (*gguf.File, *safetensors, map[string]any) {
	t.Helper()
	p, err := Lookup(preset)
	if err != nil {
		t.Fatal(err)
	}
	if p.H.NVocab > 100000 {
		p.H.NVocab, p.Tokenizer = 32000, "gguf:llama-spm"
	}
	m, err := Plan(p, p.DefaultQuant)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "m.gguf")
	if err := m.WriteFile(path, 5); err != nil {
		t.Fatal(err)
	}
	if err := WriteHF(path, p, filepath.Join(dir, "hf")); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	var config map[string]any
	if err := json.Unmarshal(mustRead(t, filepath.Join(dir, "hf", "config.json")), &config); err != nil {
		t.Fatal(err)
	}
	st := readSafetensors(t, filepath.Join(dir, "hf", "model.safetensors"))
	return f, st, config
}

func mustRead(t *testing.T, path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestHFLlamaUnpermutes(t *testing.T) {
	f, st, config := exportTiny(t, "llama-tiny")
	const d = 64 // head_dim
	// HF row h·D + s·D/2 + i is GGUF row h·D + 2i + s.
	for _, c := range []struct{ h, s, i, col int }{{0, 0, 0, 3}, {1, 1, 5, 17}, {3, 1, 31, 255}, {2, 0, 12, 100}} {
		hf := st.at(t, "model.layers.1.self_attn.q_proj.weight", c.h*d+c.s*d/2+c.i, c.col)
		gg := ggufAt(t, f, "blk.1.attn_q.weight", uint64(c.h*d+2*c.i+c.s), uint64(c.col))
		if hf != gg {
			t.Errorf("q_proj %v: %v, GGUF %v", c, hf, gg)
		}
	}
	if hf, gg := st.at(t, "model.layers.0.self_attn.k_proj.weight", 1*d+d/2+3, 9), ggufAt(t, f, "blk.0.attn_k.weight", 1*d+7, 9); hf != gg {
		t.Errorf("k_proj: %v, GGUF %v", hf, gg)
	}
	if hf, gg := st.at(t, "model.layers.1.mlp.down_proj.weight", 200, 700), ggufAt(t, f, "blk.1.ffn_down.weight", 200, 700); hf != gg {
		t.Errorf("down_proj: %v, GGUF %v", hf, gg)
	}
	if config["architectures"].([]any)[0] != "LlamaForCausalLM" || config["tie_word_embeddings"] != false || config["rms_norm_eps"] != 1e-5 {
		t.Errorf("config %v", config)
	}
	if len(st.header) != 2+2*9+1 {
		t.Errorf("%d tensors", len(st.header))
	}
}

func TestHFGPT2Transposes(t *testing.T) {
	f, st, config := exportTiny(t, "gpt2-small-tiny")
	// Conv1D weight [in, out] = GGUF [out][in] transposed.
	if hf, gg := st.at(t, "transformer.h.1.attn.c_attn.weight", 7, 600), ggufAt(t, f, "blk.1.attn_qkv.weight", 600, 7); hf != gg {
		t.Errorf("c_attn: %v, GGUF %v", hf, gg)
	}
	if hf, gg := st.at(t, "transformer.h.0.mlp.c_proj.weight", 1000, 3), ggufAt(t, f, "blk.0.ffn_down.weight", 3, 1000); hf != gg {
		t.Errorf("mlp.c_proj: %v, GGUF %v", hf, gg)
	}
	if e := st.header["transformer.wpe.weight"]; len(e.Shape) != 2 || e.Shape[0] != 1024 || e.Shape[1] != 256 {
		t.Errorf("wpe shape %v", e.Shape)
	}
	if config["activation_function"] != "gelu_new" || config["n_layer"] != 2.0 {
		t.Errorf("config %v", config)
	}
}

func TestHFGPTOSSExperts(t *testing.T) {
	f, st, config := exportTiny(t, "gpt-oss-20b-tiny")
	const hidden, ff = 192, 256
	// gate_up_proj[e, k, 2f] = gate[e][f][k], [e, k, 2f+1] = up[e][f][k].
	for _, c := range []struct{ e, k, f int }{{0, 0, 0}, {3, 191, 255}, {2, 17, 100}} {
		if hf, gg := st.at(t, "model.layers.1.mlp.experts.gate_up_proj", c.e, c.k, 2*c.f), ggufAt(t, f, "blk.1.ffn_gate_exps.weight", uint64(c.e*ff+c.f), uint64(c.k)); hf != gg {
			t.Errorf("gate %v: %v, GGUF %v", c, hf, gg)
		}
		if hf, gg := st.at(t, "model.layers.1.mlp.experts.gate_up_proj", c.e, c.k, 2*c.f+1), ggufAt(t, f, "blk.1.ffn_up_exps.weight", uint64(c.e*ff+c.f), uint64(c.k)); hf != gg {
			t.Errorf("up %v: %v, GGUF %v", c, hf, gg)
		}
		// down_proj[e, f, j] = down[e][j][f].
		if hf, gg := st.at(t, "model.layers.0.mlp.experts.down_proj", c.e, c.f, c.k), ggufAt(t, f, "blk.0.ffn_down_exps.weight", uint64(c.e*hidden+c.k), uint64(c.f)); hf != gg {
			t.Errorf("down %v: %v, GGUF %v", c, hf, gg)
		}
		if hf, gg := st.at(t, "model.layers.0.mlp.experts.gate_up_proj_bias", c.e, 2*c.f+1), ggufAt(t, f, "blk.0.ffn_up_exps.bias", uint64(c.e), uint64(c.f)); hf != gg {
			t.Errorf("up bias %v: %v, GGUF %v", c, hf, gg)
		}
	}
	// MXFP4 experts are stored as bf16 (exact: the equalities above), the rest as f32.
	for name, want := range map[string]string{"model.layers.0.mlp.experts.gate_up_proj": "BF16", "model.layers.0.mlp.experts.down_proj": "BF16",
		"model.layers.0.mlp.experts.gate_up_proj_bias": "F32", "model.embed_tokens.weight": "F32"} {
		if got := st.header[name].Dtype; got != want {
			t.Errorf("%s stored as %s, want %s", name, got, want)
		}
	}
	if e := st.header["model.layers.0.self_attn.sinks"]; len(e.Shape) != 1 || e.Shape[0] != 4 {
		t.Errorf("sinks shape %v", e.Shape)
	}
	if rp := config["rope_parameters"].(map[string]any); rp["rope_type"] != "yarn" || rp["original_max_position_embeddings"] != 256.0 || rp["rope_theta"] != 150000.0 {
		t.Errorf("rope_parameters %v", rp)
	}
	lt := config["layer_types"].([]any)
	if lt[0] != "sliding_attention" || lt[1] != "full_attention" || config["num_local_experts"] != 4.0 {
		t.Errorf("config %v", config)
	}
}

func TestHFQwen2Tied(t *testing.T) {
	_, st, config := exportTiny(t, "qwen2.5-0.5b-tiny")
	if _, ok := st.header["lm_head.weight"]; ok || config["tie_word_embeddings"] != true {
		t.Error("qwen2.5-0.5b ties its head to the embeddings")
	}
	if e := st.header["model.embed_tokens.weight"]; e.Shape[0] != 32000 || e.Shape[1] != 128 {
		t.Errorf("embeddings %v", e.Shape)
	}
	if _, ok := st.header["model.layers.1.self_attn.k_proj.bias"]; !ok {
		t.Error("qwen2 has k bias")
	}
}

func TestHFGemma3(t *testing.T) {
	f, st, config := exportTiny(t, "gemma-3-tiny")
	// Norms: transformers adds the 1 that llama.cpp's converter stored.
	for hf, gg := range map[string]string{"model.layers.5.self_attn.q_norm.weight": "blk.5.attn_q_norm.weight",
		"model.layers.0.post_feedforward_layernorm.weight": "blk.0.post_ffw_norm.weight",
		"model.layers.2.pre_feedforward_layernorm.weight":  "blk.2.ffn_norm.weight", "model.norm.weight": "output_norm.weight"} {
		if h, g := st.at(t, hf, 7), ggufAt(t, f, gg, 0, 7); h != g-1 || g == 1 {
			t.Errorf("%s[7] = %v, GGUF %s %v", hf, h, gg, g)
		}
	}
	if h, g := st.at(t, "model.layers.1.mlp.gate_proj.weight", 100, 50), ggufAt(t, f, "blk.1.ffn_gate.weight", 100, 50); h != g {
		t.Errorf("gate_proj %v, GGUF %v", h, g)
	}
	if _, ok := st.header["lm_head.weight"]; ok || config["tie_word_embeddings"] != true {
		t.Error("gemma3 ties its head")
	}
	lt := config["layer_types"].([]any)
	rp := config["rope_parameters"].(map[string]any)
	full, local := rp["full_attention"].(map[string]any), rp["sliding_attention"].(map[string]any)
	if len(lt) != 6 || lt[4] != "sliding_attention" || lt[5] != "full_attention" || config["sliding_window"] != 8.0 ||
		config["query_pre_attn_scalar"] != 64.0 || config["hidden_activation"] != "gelu_pytorch_tanh" ||
		full["rope_type"] != "linear" || full["factor"] != 8.0 || full["rope_theta"] != 1e6 || local["rope_theta"] != 10000.0 {
		t.Errorf("config %v", config)
	}
}

func TestHFQwen3MoEExperts(t *testing.T) {
	f, st, config := exportTiny(t, "qwen3-30b-a3b-tiny")
	const hidden, ff = 256, 256
	for _, c := range []struct{ e, row, col int }{{0, 0, 0}, {15, 255, 255}, {7, 100, 3}} {
		if h, g := st.at(t, fmt.Sprintf("model.layers.1.mlp.experts.%d.up_proj.weight", c.e), c.row, c.col),
			ggufAt(t, f, "blk.1.ffn_up_exps.weight", uint64(c.e*ff+c.row), uint64(c.col)); h != g {
			t.Errorf("up %v: %v, GGUF %v", c, h, g)
		}
		if h, g := st.at(t, fmt.Sprintf("model.layers.0.mlp.experts.%d.down_proj.weight", c.e), c.row, c.col),
			ggufAt(t, f, "blk.0.ffn_down_exps.weight", uint64(c.e*hidden+c.row), uint64(c.col)); h != g {
			t.Errorf("down %v: %v, GGUF %v", c, h, g)
		}
	}
	if _, ok := st.header["model.layers.0.self_attn.k_norm.weight"]; !ok {
		t.Error("no k_norm")
	}
	if config["model_type"] != "qwen3_moe" || config["num_experts"] != 16.0 || config["num_experts_per_tok"] != 4.0 ||
		config["moe_intermediate_size"] != 256.0 || config["norm_topk_prob"] != true {
		t.Errorf("config %v", config)
	}
	// transformers' strict config takes router_aux_loss_coef only as a
	// float, and Python reads a JSON 0 as an int.
	if c, ok := config["router_aux_loss_coef"].(float64); !ok || c == float64(int64(c)) {
		t.Errorf("router_aux_loss_coef %v: a whole number reads as a Python int", config["router_aux_loss_coef"])
	}
}

func TestHFLlama3Rope(t *testing.T) {
	_, st, config := exportTiny(t, "llama-3.2-1b-tiny")
	rp := config["rope_parameters"].(map[string]any)
	if rp["rope_type"] != "llama3" || rp["factor"] != 32.0 || rp["low_freq_factor"] != 1.0 || rp["high_freq_factor"] != 4.0 ||
		rp["original_max_position_embeddings"] != 8192.0 || rp["rope_theta"] != 500000.0 {
		t.Errorf("rope_parameters %v", rp)
	}
	if _, ok := st.header["rope_freqs.weight"]; ok {
		t.Error("transformers computes the divisors; the export must not carry rope_freqs")
	}
}

// SmolLM3 exports as transformers' SmolLM3ForCausalLM: llama's tensors
// (q and k un-permuted), the tied head, and the declared NoPE layers as
// no_rope_layers with their interval.
func TestHFSmolLM3(t *testing.T) {
	_, st, config := exportTiny(t, "smollm3-3b-tiny")
	if config["model_type"] != "smollm3" || config["architectures"].([]any)[0] != "SmolLM3ForCausalLM" {
		t.Errorf("model_type %v, architectures %v", config["model_type"], config["architectures"])
	}
	if got := fmt.Sprint(config["no_rope_layers"]); got != "[1 1 1 0]" || config["no_rope_layer_interval"] != 4.0 {
		t.Errorf("no_rope_layers %s, interval %v; want [1 1 1 0] and 4", got, config["no_rope_layer_interval"])
	}
	if _, ok := st.header["lm_head.weight"]; ok || config["tie_word_embeddings"] != true {
		t.Error("SmolLM3 ties its head to the embeddings")
	}
	if config["rope_theta"] != 5e6 || config["rms_norm_eps"] != 1e-6 || config["num_key_value_heads"] != 1.0 {
		t.Errorf("config %v", config)
	}
	if q := st.header["model.layers.3.self_attn.q_proj.weight"]; q.Shape[0] != 256 || q.Shape[1] != 256 {
		t.Errorf("q_proj %v", q.Shape)
	}
}

// noRopeLayers writes the list of any pattern, and an interval only where
// the pattern has that period.
func TestNoRopeLayers(t *testing.T) {
	for _, c := range []struct {
		rotates  func(int) bool
		list     string
		interval int
	}{
		{func(i int) bool { return (i+1)%4 != 0 }, "[1 1 1 0 1 1 1 0 1]", 4},
		{nil, "[1 1 1 1 1 1 1 1 1]", 10},
		{func(i int) bool { return i != 2 }, "[1 1 0 1 1 1 1 1 1]", 10},
	} {
		list, interval := noRopeLayers(&arch.Compute{Rope: arch.RopeNormal, RopeLayers: c.rotates}, 9)
		if fmt.Sprint(list) != c.list || interval != c.interval {
			t.Errorf("got %v, %d; want %s, %d", list, interval, c.list, c.interval)
		}
	}
}

package synth

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/llama-orch/orc/gguf"
)

func plan(t *testing.T, preset string, q Quant) *Model {
	t.Helper()
	p, err := Lookup(preset)
	if err != nil {
		t.Fatal(err)
	}
	return mustPlan(t, p, q)
}

func typeCounts(m *Model) map[gguf.Type]int {
	c := map[gguf.Type]int{}
	for _, t := range m.Tensors {
		c[t.Type]++
	}
	return c
}

// The acceptance figures of llama.cpp's real Qwen2.5-0.5B-Instruct Q4_K_M:
// 132 Q5_0, 13 Q8_0, 12 Q4_K, 12 Q6_K, norms and biases F32, 397,808,192 bytes.
func TestQwen25Q4KM(t *testing.T) {
	m := plan(t, "qwen2.5-0.5b", QuantQ4KM)
	got := typeCounts(m)
	want := map[gguf.Type]int{gguf.Q5_0: 132, gguf.Q8_0: 13, gguf.Q4_K: 12, gguf.Q6_K: 12, gguf.F32: 121}
	for typ, n := range want {
		if got[typ] != n {
			t.Errorf("%s: %d tensors, want %d (all: %v)", typ, got[typ], n, got)
		}
	}
	for _, tn := range m.Tensors {
		if len(tn.Dims) == 1 && tn.Type != gguf.F32 {
			t.Errorf("%s: vector stored as %s", tn.Name, tn.Type)
		}
	}
	// Exact choices: the tied token_embd takes the head's Q6_K → Q8_0; attn_v
	// of the use_more_bits layers Q6_K → Q8_0; ffn_down (4864 = 19·256) keeps K-quants.
	for name, typ := range map[string]gguf.Type{
		"token_embd.weight": gguf.Q8_0, "blk.0.attn_v.weight": gguf.Q8_0, "blk.3.attn_v.weight": gguf.Q5_0,
		"blk.5.attn_v.weight": gguf.Q8_0, "blk.0.ffn_down.weight": gguf.Q6_K, "blk.3.ffn_down.weight": gguf.Q4_K,
		"blk.23.ffn_down.weight": gguf.Q6_K, "blk.7.attn_q.weight": gguf.Q5_0,
	} {
		if tn := find(m, name); tn == nil || tn.Type != typ {
			t.Errorf("%s: %v, want %s", name, tn, typ)
		}
	}
	size, err := m.Size()
	if err != nil {
		t.Fatal(err)
	}
	const real = 397808192
	if d := float64(size-real) / real; d > 0.01 || d < -0.01 {
		t.Errorf("file is %d bytes, %.2f%% from the real %d", size, 100*d, real)
	}
	t.Logf("qwen2.5-0.5b q4_k_m: %d bytes (real %d), %d params", size, real, m.Params)
}

func find(m *Model, name string) *Tensor {
	for i := range m.Tensors {
		if m.Tensors[i].Name == name {
			return &m.Tensors[i]
		}
	}
	return nil
}

// The tensor names and KV keys of the real Qwen2.5-0.5B-Instruct conversion.
func TestQwen25MatchesReference(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "testdata", "reference", "qwen2.5-0.5b-instruct-f16.tensors.json"))
	if err != nil {
		t.Skipf("reference not available: %v", err)
	}
	var ref map[string]any
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	m := plan(t, "qwen2.5-0.5b", QuantF16)
	f := parseHeader(t, m)
	ours := map[string]bool{}
	for _, kv := range f.KVs {
		ours[kv.Key] = true
	}
	for _, tn := range f.Tensors {
		ours[tn.Name] = true
	}
	// tokenizer.ggml.* follow llama.cpp's converter (bos_token_id,
	// add_bos_token, chat_template) where the reference, written by ollama's
	// converter, has scores and add_padding_token instead; every other key and
	// every tensor name must match exactly.
	onlyRef := map[string]bool{"tokenizer.ggml.scores": true, "tokenizer.ggml.add_padding_token": true}
	for k := range ref {
		if !ours[k] && !onlyRef[k] {
			t.Errorf("missing %s", k)
		}
	}
	for k := range ours {
		if _, ok := ref[k]; !ok && !strings.HasPrefix(k, "tokenizer.") && k != "general.name" {
			t.Errorf("extra %s", k)
		}
	}
	for _, k := range []string{"qwen2.block_count", "qwen2.embedding_length", "qwen2.feed_forward_length",
		"qwen2.attention.head_count", "qwen2.attention.head_count_kv", "qwen2.context_length",
		"general.parameter_count", "tokenizer.ggml.eos_token_id", "tokenizer.ggml.padding_token_id"} {
		v, _ := f.Get(k)
		want, err := strconv.ParseFloat(fmt.Sprint(ref[k]), 64)
		if got := toFloat(v.V); err != nil || got != want {
			t.Errorf("%s = %v, reference %v", k, got, want)
		}
	}
	if toks, _ := f.Strings("tokenizer.ggml.tokens"); len(toks) != 151936 {
		t.Errorf("%d tokens, want 151936", len(toks))
	}
}

func toFloat(v any) float64 {
	switch x := v.(type) {
	case uint32:
		return float64(x)
	case uint64:
		return float64(x)
	case float32:
		return float64(x)
	}
	return -1
}

// parseHeader writes the file with zeroed tensor data as a sparse file
// (so that no gigabytes hit the disk) and parses it back.
func parseHeader(t *testing.T, m *Model) *gguf.File {
	t.Helper()
	fd, err := os.Create(filepath.Join(t.TempDir(), "model.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer fd.Close()
	m.emit = func(w io.Writer, tn *Tensor) error { return writeZeros(w, tn.Bytes()) }
	sw := &sparseWriter{f: fd}
	n, err := m.w.WriteTo(sw)
	if err == nil {
		err = fd.Truncate(n)
	}
	if err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(fd.Name())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// sparseWriter seeks over all-zero writes.
type sparseWriter struct{ f *os.File }

func (s *sparseWriter) Write(p []byte) (int, error) {
	for _, b := range p {
		if b != 0 {
			return s.f.Write(p)
		}
	}
	_, err := s.f.Seek(int64(len(p)), io.SeekCurrent)
	return len(p), err
}

func TestPhi3Q4KMSize(t *testing.T) {
	m := plan(t, "phi-3-mini-4k", QuantQ4KM)
	size, err := m.Size()
	if err != nil {
		t.Fatal(err)
	}
	if d := float64(size)/2.39e9 - 1; d > 0.01 || d < -0.01 {
		t.Errorf("phi-3-mini-4k q4_k_m is %d bytes, %.2f%% from 2.39 GB", size, 100*d)
	}
	t.Logf("phi-3-mini-4k q4_k_m: %d bytes, types %v", size, typeCounts(m))
}

func TestGPTOSSExperts(t *testing.T) {
	m := plan(t, "gpt-oss-20b", QuantMXFP4)
	layers := map[int]int{}
	for _, tn := range m.Tensors {
		if strings.HasSuffix(tn.Name, "_exps.weight") {
			if tn.Type != gguf.MXFP4 || len(tn.Dims) != 3 || tn.Dims[2] != 32 {
				t.Errorf("%s: %s %v, want MXFP4 with 32 experts", tn.Name, tn.Type, tn.Dims)
			}
			layers[tn.Layer]++
		}
	}
	if len(layers) != 24 {
		t.Errorf("%d layers with experts, want 24", len(layers))
	}
	for l, n := range layers {
		if n != 3 {
			t.Errorf("layer %d has %d expert tensors, want gate, up and down", l, n)
		}
	}
	size, err := m.Size()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("gpt-oss-20b mxfp4: %d bytes, %d params, types %v", size, m.Params, typeCounts(m))
}

// A cut keeps the first n layers at real widths: the non-layer tensors and
// those layers' tensors, shaped as in the whole model.
func TestCut(t *testing.T) {
	p, err := Lookup("qwen2.5-0.5b")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 25} {
		if _, err := p.Cut(n); err == nil {
			t.Errorf("Cut(%d) of 24 layers: no error", n)
		}
	}
	c, err := p.Cut(2)
	if err != nil {
		t.Fatal(err)
	}
	whole, cut := plan(t, "qwen2.5-0.5b", QuantF16), mustPlan(t, c, QuantF16)
	shapes := map[string]string{}
	for _, tn := range whole.Tensors {
		shapes[tn.Name] = fmt.Sprint(tn.Dims)
	}
	layers := map[int]bool{}
	for _, tn := range cut.Tensors {
		layers[tn.Layer] = true
		if shapes[tn.Name] != fmt.Sprint(tn.Dims) {
			t.Errorf("%s: %v in the cut, %s in the whole model", tn.Name, tn.Dims, shapes[tn.Name])
		}
	}
	if len(layers) != 3 || !layers[-1] || !layers[0] || !layers[1] {
		t.Errorf("cut to 2 layers has tensors of layers %v", layers)
	}
	if p.H.NLayer != 24 || c.H.NLayer != 2 {
		t.Errorf("layers: preset %d, cut %d", p.H.NLayer, c.H.NLayer)
	}
}

func mustPlan(t *testing.T, p *Preset, q Quant) *Model {
	t.Helper()
	m, err := Plan(p, q)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

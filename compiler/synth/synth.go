// Package synth writes synthetic GGUF models of real shapes: the real tensor
// names, shapes and metadata of each preset's architecture (from
// compiler/arch's declarative structs), llama.cpp's per-tensor type choice
// for the quantisation mode, the real tokenizer, and random but well-scaled
// weights, deterministic from a seed.
package synth

import (
	"fmt"
	"hash/fnv"
	"io"
	"regexp"
	"sort"

	"github.com/llama-orch/orc/compiler/arch"
	"github.com/llama-orch/orc/gguf"
)

// Tensor is one planned tensor.
type Tensor struct {
	Name  string
	Dims  []uint64 // ggml order
	Type  gguf.Type
	Layer int // -1 outside the layers
}

// Bytes is the encoded size.
func (t *Tensor) Bytes() int64 {
	ti := gguf.TensorInfo{Dims: t.Dims, Type: t.Type}
	return int64(ti.Bytes())
}

// Model is a planned synthetic file: its metadata is complete; tensor data
// is drawn while writing. A Model writes one file at a time.
type Model struct {
	Preset  *Preset
	Quant   Quant
	Tensors []Tensor // in file order (llama.cpp's: non-layer tensors by name, then layer by layer)
	Params  int64    // parameter count
	w       *gguf.Writer
	emit    func(io.Writer, *Tensor) error // draws (or zero-fills) one tensor's data
}

var layerPrefix = regexp.MustCompile(`^blk\.\d+\.`)

// Plan lays out the preset's file for the quant mode without drawing data.
func Plan(p *Preset, q Quant) (*Model, error) {
	a, err := arch.Lookup(p.H.Arch)
	if err != nil {
		return nil, err
	}
	specs, err := arch.Tensors(a.NewWeights(p.H.NLayer), &p.H)
	if err != nil {
		return nil, err
	}
	wanted := map[string]bool{}
	for _, o := range p.Optional {
		wanted[o] = true
	}
	m := &Model{Preset: p, Quant: q}
	for _, s := range specs {
		if s.Optional && !wanted[layerPrefix.ReplaceAllString(s.Name, "")] {
			continue
		}
		m.Tensors = append(m.Tensors, Tensor{Name: s.Name, Dims: s.Dims, Layer: s.Layer})
	}
	sort.SliceStable(m.Tensors, func(i, j int) bool {
		a, b := m.Tensors[i], m.Tensors[j]
		if a.Layer != b.Layer {
			return a.Layer < b.Layer
		}
		return a.Name < b.Name
	})
	names := make([]string, len(m.Tensors))
	for i, t := range m.Tensors {
		names[i] = t.Name
	}
	planner := newTypePlanner(q, names, p.H.NLayer, p.H.NExpert)
	for i := range m.Tensors {
		t := &m.Tensors[i]
		if t.Type, err = planner.typeFor(t.Name, t.Dims, t.Layer); err != nil {
			return nil, err
		}
		n := int64(1)
		for _, d := range t.Dims {
			n *= int64(d)
		}
		m.Params += n
	}
	if m.w, err = m.metadata(); err != nil {
		return nil, err
	}
	for i := range m.Tensors {
		t := &m.Tensors[i]
		if err := m.w.AddTensor(t.Name, t.Type, t.Dims, func(w io.Writer) error { return m.emit(w, t) }); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// metadata builds the writer with every KV pair.
func (m *Model) metadata() (*gguf.Writer, error) {
	p := m.Preset
	w := gguf.NewWriter()
	w.Set("general.architecture", p.H.Arch)
	w.Set("general.name", p.Name)
	for _, k := range p.Keys {
		v, err := hparamValue(&p.H, k)
		if err != nil {
			return nil, fmt.Errorf("synth: preset %s: %w", p.Name, err)
		}
		w.Set(p.H.Arch+"."+k, v)
	}
	w.Set("general.file_type", m.Quant.FileType())
	w.Set("general.quantization_version", uint32(2))
	w.Set("general.parameter_count", uint64(m.Params))
	if err := writeTokenizer(w, p); err != nil {
		return nil, err
	}
	return w, nil
}

func hparamValue(h *arch.Hparams, key string) (any, error) {
	u := func(n int) any { return uint32(n) }
	switch key {
	case "context_length":
		return u(h.NCtx), nil
	case "embedding_length":
		return u(h.NEmbd), nil
	case "block_count":
		return u(h.NLayer), nil
	case "feed_forward_length":
		return u(h.NFF), nil
	case "attention.head_count":
		return u(h.NHead), nil
	case "attention.head_count_kv":
		return u(h.NHeadKV), nil
	case "attention.key_length", "attention.value_length":
		return u(h.HeadDim), nil
	case "attention.layer_norm_rms_epsilon", "attention.layer_norm_epsilon":
		return float32(h.Eps), nil
	case "rope.freq_base":
		return float32(h.RopeBase), nil
	case "rope.dimension_count":
		return u(h.RopeDims), nil
	case "attention.sliding_window":
		return u(h.SlidingWindow), nil
	case "expert_count":
		return u(h.NExpert), nil
	case "expert_used_count":
		return u(h.NExpertUsed), nil
	case "expert_feed_forward_length":
		return u(h.ExpertFF), nil
	case "rope.scaling.type":
		return h.Scaling.Type, nil
	case "rope.scaling.factor":
		return float32(h.Scaling.Factor), nil
	case "rope.scaling.original_context_length":
		return u(h.Scaling.OrigCtx), nil
	}
	return nil, fmt.Errorf("no hyperparameter for key %q", key)
}

// Write streams the whole file to out, drawing tensor data from seed.
func (m *Model) Write(out io.Writer, seed uint64) (int64, error) {
	m.emit = m.draw(seed)
	return m.w.WriteTo(out)
}

// draw writes a tensor's data: random from seed, except the computed
// rope_freqs of a preset with Llama3Rope.
func (m *Model) draw(seed uint64) func(io.Writer, *Tensor) error {
	return func(w io.Writer, t *Tensor) error {
		if t.Name == ropeFreqsName && m.Preset.Llama3Rope != nil {
			return writeRopeFreqs(w, m.Preset)
		}
		return drawTensor(w, t, seed)
	}
}

// Size is the exact file size, computed by writing zeros to io.Discard.
func (m *Model) Size() (int64, error) {
	m.emit = func(w io.Writer, t *Tensor) error { return writeZeros(w, t.Bytes()) }
	return m.w.WriteTo(io.Discard)
}

// WriteFile writes the file to path atomically.
func (m *Model) WriteFile(path string, seed uint64) error {
	m.emit = m.draw(seed)
	return m.w.WriteFile(path)
}

func writeZeros(w io.Writer, n int64) error {
	zeros := make([]byte, min(n, 1<<20))
	for n > 0 {
		k := min(n, int64(len(zeros)))
		if _, err := w.Write(zeros[:k]); err != nil {
			return err
		}
		n -= k
	}
	return nil
}

func nameHash(name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return h.Sum64()
}

package synth

import (
	"fmt"
	"strings"

	"github.com/llama-orch/orc/gguf"
)

// Quant is a quantisation mode of a whole file, as llama.cpp's ftype.
type Quant string

const (
	QuantQ4KM  Quant = "q4_k_m"
	QuantQ4_0  Quant = "q4_0"
	QuantMXFP4 Quant = "mxfp4" // llama.cpp's MXFP4_MOE: experts MXFP4, other matrices Q8_0
	QuantF16   Quant = "f16"
	QuantF32   Quant = "f32"
)

// Quants lists the supported modes.
var Quants = []Quant{QuantQ4KM, QuantQ4_0, QuantMXFP4, QuantF16, QuantF32}

// ParseQuant accepts a mode name in any case.
func ParseQuant(s string) (Quant, error) {
	for _, q := range Quants {
		if strings.EqualFold(s, string(q)) {
			return q, nil
		}
	}
	names := make([]string, len(Quants))
	for i, q := range Quants {
		names[i] = string(q)
	}
	return "", fmt.Errorf("synth: unknown quant %q (supported: %s)", s, strings.Join(names, ", "))
}

// FileType is general.file_type for the mode.
func (q Quant) FileType() uint32 {
	return map[Quant]uint32{
		QuantQ4KM: gguf.FileTypeQ4_K_M, QuantQ4_0: gguf.FileTypeQ4_0, QuantMXFP4: gguf.FileTypeMXFP4MoE,
		QuantF16: gguf.FileTypeF16, QuantF32: gguf.FileTypeAllF32,
	}[q]
}

// typePlanner reproduces llama.cpp's per-tensor type choice
// (llama_tensor_get_type in src/llama-quant.cpp) for the modes we write. It
// must see the tensors in llama.cpp's order (non-layer tensors by name, then
// layer by layer, names sorted within a layer) because attn_v's "use more
// bits" rule counts the attn_v tensors seen so far.
type typePlanner struct {
	q         Quant
	nLayer    int
	nExpert   int
	hasOutput bool // a separate output.weight exists (else token_embd plays its part)
	nAttnV    int  // attn_v / attn_qkv tensors in the model
	iAttnV    int
	iFFNDown  int
}

func newTypePlanner(q Quant, names []string, nLayer, nExpert int) *typePlanner {
	p := &typePlanner{q: q, nLayer: nLayer, nExpert: nExpert}
	for _, n := range names {
		if strings.Contains(n, "attn_v.weight") || strings.Contains(n, "attn_qkv.weight") {
			p.nAttnV++
		}
		if n == "output.weight" {
			p.hasOutput = true
		}
	}
	return p
}

// useMoreBits is llama.cpp's layer selection for the bigger type: the first
// and last eighth of the layers and every third layer in between.
func useMoreBits(i, n int) bool { return i < n/8 || i >= 7*n/8 || (i-n/8)%3 == 2 }

// quantizable is llama.cpp's filter: only 2-D and 3-D ".weight" tensors,
// never norms, the MoE router or learned positions.
func quantizable(name string, dims []uint64) bool {
	return strings.HasSuffix(name, "weight") && len(dims) >= 2 &&
		!strings.Contains(name, "_norm.weight") &&
		!strings.Contains(name, "ffn_gate_inp.weight") &&
		name != "position_embd.weight"
}

// typeFor returns the ggml type of the next tensor (call in llama.cpp order).
// Tensors the quantizer leaves alone (vectors, norms, the router, learned
// positions) are F32, as in llama.cpp's conversions.
func (p *typePlanner) typeFor(name string, dims []uint64, layer int) (gguf.Type, error) {
	if p.q == QuantF32 || !quantizable(name, dims) {
		return gguf.F32, nil
	}
	if p.q == QuantF16 {
		return gguf.F16, nil
	}
	t := p.chooseType(name, dims, layer)
	if dims[0]%uint64(t.BlockSize()) == 0 {
		return t, nil
	}
	// llama.cpp's fallback when a row does not split into 256-blocks.
	fallback := map[gguf.Type]gguf.Type{gguf.Q4_K: gguf.Q5_0, gguf.Q6_K: gguf.Q8_0}
	f, ok := fallback[t]
	if !ok {
		return 0, fmt.Errorf("synth: tensor %s (row %d) would fall back from %s to a type orc does not support", name, dims[0], t)
	}
	if dims[0]%uint64(f.BlockSize()) != 0 {
		return gguf.F16, nil
	}
	return f, nil
}

// chooseType is llama_tensor_get_type's decision for Q4_K_M, Q4_0 and
// MXFP4_MOE before the fallback.
func (p *typePlanner) chooseType(name string, dims []uint64, layer int) gguf.Type {
	def := map[Quant]gguf.Type{QuantQ4KM: gguf.Q4_K, QuantQ4_0: gguf.Q4_0, QuantMXFP4: gguf.MXFP4}[p.q]
	// The LM head (or token_embd when it doubles as the head) gets Q6_K,
	// Q8_0 when its row does not fit the default type's blocks or for MXFP4_MOE.
	if name == "output.weight" || (!p.hasOutput && name == "token_embd.weight") {
		if p.q == QuantMXFP4 || dims[0]%uint64(def.BlockSize()) != 0 {
			return gguf.Q8_0
		}
		return gguf.Q6_K
	}
	if p.q == QuantMXFP4 {
		if len(dims) >= 3 && dims[2] > 1 {
			return gguf.MXFP4
		}
		return gguf.Q8_0
	}
	q4km := p.q == QuantQ4KM
	t := def
	switch {
	case name == "token_embd.weight":
	case strings.Contains(name, "attn_v.weight"):
		if q4km && useMoreBits(p.iAttnV, p.nAttnV) {
			t = gguf.Q6_K
		}
		if p.nExpert == 8 {
			t = gguf.Q8_0
		}
		p.iAttnV++
	case strings.Contains(name, "attn_k.weight"):
		if p.nExpert == 8 {
			t = gguf.Q8_0
		}
	case strings.Contains(name, "ffn_down"):
		// With experts llama.cpp takes the layer from the name, else it
		// counts ffn_down tensors.
		i := p.iFFNDown
		if p.nExpert > 1 {
			i = layer
		}
		if q4km && useMoreBits(i, p.nLayer) {
			t = gguf.Q6_K
		}
		p.iFFNDown++
	case strings.Contains(name, "attn_output.weight"):
		if q4km && p.nExpert == 8 {
			t = gguf.Q5_K
		}
	case strings.Contains(name, "attn_qkv.weight"):
		if q4km {
			t = gguf.Q5_K
		}
	}
	return t
}

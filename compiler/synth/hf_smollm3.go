package synth

import (
	"github.com/llama-orch/orc/compiler/arch"
)

// SmolLM3 exports as llama does (its tensors are llama's) to transformers'
// SmolLM3ForCausalLM, whose config lists the layers that rotate.
func init() {
	hfExporters["smollm3"] = func(r hfReader, m *arch.Model, p *Preset) ([]stTensor, map[string]any, error) {
		ts, c, err := hfLlama(r, m, p, m.Weights.(*arch.Llama))
		if err != nil {
			return nil, nil, err
		}
		c["architectures"], c["model_type"] = []string{"SmolLM3ForCausalLM"}, "smollm3"
		c["no_rope_layers"], c["no_rope_layer_interval"] = noRopeLayers(&m.Arch.Compute, m.H.NLayer)
		c["use_sliding_window"] = false
		return ts, c, nil
	}
}

// noRopeLayers is transformers' no_rope_layers (1: the layer rotates) of
// the declared pattern, and no_rope_layer_interval: the period of its
// NoPE layers (transformers builds the list from it when the list is
// absent; here both say the same).
func noRopeLayers(c *arch.Compute, nLayer int) ([]int, int) {
	list := make([]int, nLayer)
	interval := 0
	for i := range list {
		if c.Rotates(i) {
			list[i] = 1
		} else if interval == 0 {
			interval = i + 1
		}
	}
	for i := range list {
		if interval == 0 || (list[i] == 1) != ((i+1)%interval != 0) {
			return list, nLayer + 1 // no NoPE layer, or no period: the list alone holds
		}
	}
	return list, interval
}

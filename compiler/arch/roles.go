package arch

import (
	"fmt"
	"reflect"

	"github.com/llama-orch/orc/gguf"
)

// Roles are a model's tensors by what the lowering does with them, read
// from the architecture's weight struct by field name: a weight struct
// names each tensor field after its role (the GGUF name is in its tag, and
// two architectures may give one GGUF name different roles: gpt-oss's
// post_attention_norm is its FFN pre-norm). nil is a tensor the file lacks.
type Roles struct {
	TokenEmbd        *gguf.TensorInfo // [n_vocab][n_embd]
	PositionEmbd     *gguf.TensorInfo // [n_ctx][n_embd]: learned positions
	RopeFreqs        *gguf.TensorInfo // [rope_dims/2]: frequency divisors (Compute.RopeFreqFactors)
	RopeFactorsLong  *gguf.TensorInfo // LongRoPE factors, not supported by the lowering
	RopeFactorsShort *gguf.TensorInfo
	Layers           []LayerRoles
	OutputNorm       *gguf.TensorInfo // [n_embd]
	OutputNormBias   *gguf.TensorInfo
	Output           *gguf.TensorInfo // [n_vocab][n_embd]; nil = tied to TokenEmbd
}

// LayerRoles are one block's tensors by role.
type LayerRoles struct {
	AttnNorm, AttnNormBias       *gguf.TensorInfo // [n_embd]
	AttnQ, AttnQBias             *gguf.TensorInfo // [n_head*head_dim][n_embd]
	AttnK, AttnKBias             *gguf.TensorInfo // [n_head_kv*head_dim][n_embd]
	AttnV, AttnVBias             *gguf.TensorInfo // [n_head_kv*head_dim][n_embd]
	AttnQKV, AttnQKVBias         *gguf.TensorInfo // packed [q; k; v] rows instead of AttnQ, AttnK, AttnV
	AttnQNorm, AttnKNorm         *gguf.TensorInfo // [head_dim] (Compute.QKNorm)
	AttnOutput, AttnOutputBias   *gguf.TensorInfo // [n_embd][n_head*head_dim]
	AttnSinks                    *gguf.TensorInfo // [n_head]
	PostAttnNorm                 *gguf.TensorInfo // [n_embd] (Compute.PostNorms)
	FFNNorm, FFNNormBias         *gguf.TensorInfo // [n_embd]: the FFN's pre-norm
	FFNGate                      *gguf.TensorInfo // [n_ff][n_embd]
	FFNUp, FFNUpBias             *gguf.TensorInfo // [n_ff][n_embd], or [2*n_ff][n_embd] packed (FFNGatedPacked)
	FFNDown, FFNDownBias         *gguf.TensorInfo // [n_embd][n_ff]
	PostFFNNorm                  *gguf.TensorInfo // [n_embd] (Compute.PostNorms)
	FFNGateInp, FFNGateInpBias   *gguf.TensorInfo // router [n_expert][n_embd], [n_expert]
	FFNGateExps, FFNGateExpsBias *gguf.TensorInfo // [n_expert][n_ff_exp][n_embd], [n_expert][n_ff_exp]
	FFNUpExps, FFNUpExpsBias     *gguf.TensorInfo
	FFNDownExps, FFNDownExpsBias *gguf.TensorInfo // [n_expert][n_embd][n_ff_exp], [n_expert][n_embd]
}

// Roles reads the model's weight struct into roles.
func (m *Model) Roles() (*Roles, error) {
	r := &Roles{}
	v := reflect.ValueOf(m.Weights)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("arch: %s weights are %T, want a pointer to a struct", m.H.Arch, m.Weights)
	}
	if err := copyRoles(v.Elem(), reflect.ValueOf(r).Elem(), func(n int) reflect.Value {
		r.Layers = make([]LayerRoles, n)
		return reflect.ValueOf(r.Layers)
	}); err != nil {
		return nil, fmt.Errorf("arch: %s: %w", m.H.Arch, err)
	}
	return r, nil
}

// copyRoles copies each tensor field of src into dst's field of the same
// name; a slice of layer structs goes into the slice layers makes.
func copyRoles(src, dst reflect.Value, layers func(n int) reflect.Value) error {
	t := src.Type()
	for i := 0; i < t.NumField(); i++ {
		f, fv := t.Field(i), src.Field(i)
		switch {
		case f.Type == tensorInfoType:
			d := dst.FieldByName(f.Name)
			if !d.IsValid() || d.Type() != tensorInfoType {
				return fmt.Errorf("%s.%s names no tensor role", t.Name(), f.Name)
			}
			d.Set(fv)
		case f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Struct && layers != nil:
			out := layers(fv.Len())
			for l := 0; l < fv.Len(); l++ {
				if err := copyRoles(fv.Index(l), out.Index(l), nil); err != nil {
					return err
				}
			}
		default:
			return fmt.Errorf("%s.%s is neither a tensor nor the layers", t.Name(), f.Name)
		}
	}
	return nil
}

package arch

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/llama-orch/orc/gguf"
)

// A weight struct field names its tensor with a tag:
//
//	AttnQ *gguf.TensorInfo `gguf:"blk.%d.attn_q.weight" shape:"n_embd,n_q"`
//
// "%d" is the layer index (fields of the Layers slice's element struct);
// ",optional" after the name marks a tensor a file may lack. shape lists the
// dims in ggml order (contiguous dim first) as symbols of the hyperparameters
// (see dimSymbols) or integers.

// TensorSpec is one tensor an architecture names, for given hyperparameters.
type TensorSpec struct {
	Name     string
	Dims     []uint64 // ggml order: Dims[0] is the contiguous (input) dim
	Optional bool
	Layer    int // -1 for tensors outside the layers
	field    reflect.Value
}

var tensorInfoType = reflect.TypeOf((*gguf.TensorInfo)(nil))

// dimSymbols are the names a shape tag may use.
func dimSymbols(h *Hparams) map[string]int {
	nq, nkv := h.NHead*h.HeadDim, h.NHeadKV*h.HeadDim
	return map[string]int{
		"n_embd": h.NEmbd, "n_vocab": h.NVocab, "n_ff": h.NFF, "n_ff2": 2 * h.NFF,
		"n_head": h.NHead, "n_q": nq, "n_kv": nkv, "n_qkv": nq + 2*nkv,
		"n_expert": h.NExpert, "n_ff_exp": h.ExpertFF, "n_ctx": h.NCtx, "rope_half": h.RopeDims / 2,
		"head_dim": h.HeadDim,
	}
}

// Tensors lists every tensor the weight struct w (a pointer, as NewWeights
// returns) names, in declaration order with the layers expanded in place.
func Tensors(w any, h *Hparams) ([]TensorSpec, error) {
	v := reflect.ValueOf(w)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("arch: weights must be a pointer to a struct, got %T", w)
	}
	syms := dimSymbols(h)
	var out []TensorSpec
	var walk func(s reflect.Value, layer int) error
	walk = func(s reflect.Value, layer int) error {
		t := s.Type()
		for i := 0; i < t.NumField(); i++ {
			f, fv := t.Field(i), s.Field(i)
			switch {
			case f.Type == tensorInfoType:
				spec, err := fieldSpec(f, layer, syms)
				if err != nil {
					return fmt.Errorf("arch: %s.%s: %w", t.Name(), f.Name, err)
				}
				spec.field = fv
				out = append(out, spec)
			case f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Struct:
				for l := 0; l < fv.Len(); l++ {
					if err := walk(fv.Index(l), l); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	if err := walk(v.Elem(), -1); err != nil {
		return nil, err
	}
	return out, nil
}

func fieldSpec(f reflect.StructField, layer int, syms map[string]int) (TensorSpec, error) {
	tag, ok := f.Tag.Lookup("gguf")
	if !ok {
		return TensorSpec{}, fmt.Errorf("no gguf tag")
	}
	name, opt, _ := strings.Cut(tag, ",")
	if strings.Contains(name, "%d") != (layer >= 0) {
		return TensorSpec{}, fmt.Errorf("tensor name %q: %%d must appear exactly in layer fields", name)
	}
	if layer >= 0 {
		name = fmt.Sprintf(name, layer)
	}
	spec := TensorSpec{Name: name, Optional: opt == "optional", Layer: layer}
	for _, sym := range strings.Split(f.Tag.Get("shape"), ",") {
		n, ok := syms[sym]
		if !ok {
			var err error
			if n, err = strconv.Atoi(sym); err != nil {
				return TensorSpec{}, fmt.Errorf("tensor %s: unknown shape symbol %q", name, sym)
			}
		}
		if n <= 0 {
			return TensorSpec{}, fmt.Errorf("tensor %s: dim %s is %d", name, sym, n)
		}
		spec.Dims = append(spec.Dims, uint64(n))
	}
	return spec, nil
}

// bind points every field of w at its tensor in f, checking shapes.
func bind(f *gguf.File, h *Hparams, w any) error {
	specs, err := Tensors(w, h)
	if err != nil {
		return err
	}
	for _, s := range specs {
		t, ok := f.Tensor(s.Name)
		if !ok {
			if s.Optional {
				continue
			}
			return fmt.Errorf("arch: %s: required tensor %s is missing", h.Arch, s.Name)
		}
		if !slices.Equal(t.Dims, s.Dims) {
			return fmt.Errorf("arch: %s: tensor %s has shape %v, the hyperparameters give %v", h.Arch, s.Name, t.Dims, s.Dims)
		}
		s.field.Set(reflect.ValueOf(t))
	}
	return nil
}

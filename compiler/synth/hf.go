package synth

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/llama-orch/orc/compiler/arch"
	"github.com/llama-orch/orc/gguf"
	"github.com/llama-orch/orc/quant"
)

// WriteHF exports the GGUF model at ggufPath (written by synth for preset p)
// as a Hugging Face model directory: model.safetensors with the dequantized
// weights under transformers' names and layouts, config.json, and the
// tokenizer files where the preset has them. transformers then loads
// exactly the model the GGUF holds, as the reference implementation:
// every weight keeps its dequantized value (exportType).
func WriteHF(ggufPath string, p *Preset, dir string) error {
	f, err := gguf.Open(ggufPath)
	if err != nil {
		return err
	}
	defer f.Close()
	m, err := arch.Load(f)
	if err != nil {
		return err
	}
	export, ok := hfExporters[m.H.Arch]
	if !ok {
		return fmt.Errorf("synth: no Hugging Face export for %s", m.H.Arch)
	}
	tensors, config, err := export(hfReader{f: f}, m, p)
	if err != nil {
		return err
	}
	// The reference computes in float32 whatever the stored types.
	config["torch_dtype"] = "float32"
	config["dtype"] = "float32"
	config["vocab_size"] = m.H.NVocab
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := writeHFTokenizer(f, p, dir, config); err != nil {
		return err
	}
	js, err := json.MarshalIndent(config, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), append(js, '\n'), 0o644); err != nil {
		return err
	}
	return writeSafetensors(filepath.Join(dir, "model.safetensors"), tensors)
}

// hfExporter turns a model of one architecture (written by synth for preset
// p) into transformers' tensors and config.json.
type hfExporter func(r hfReader, m *arch.Model, p *Preset) ([]stTensor, map[string]any, error)

// hfExporters are the exporters by general.architecture, each registered
// by its own file.
var hfExporters = map[string]hfExporter{}

// writeHFTokenizer copies the preset's tokenizer.json (and
// tokenizer_config.json where there is one) and puts the special ids in the
// config.
func writeHFTokenizer(f *gguf.File, p *Preset, dir string, config map[string]any) error {
	for key, name := range map[string]string{"tokenizer.ggml.bos_token_id": "bos_token_id", "tokenizer.ggml.eos_token_id": "eos_token_id", "tokenizer.ggml.padding_token_id": "pad_token_id"} {
		if id, ok := f.Uint(key); ok {
			config[name] = id
		}
	}
	kind, name, _ := strings.Cut(p.Tokenizer, ":")
	if kind != "hf" {
		return nil // only the GGUF vocabulary exists for this tokenizer
	}
	for _, file := range []string{"tokenizer.json", "tokenizer_config.json"} {
		data, err := asset(name + "-" + file)
		if err != nil {
			if file == "tokenizer.json" {
				return err
			}
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, file), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// hfReader produces HF-layout float32 values from GGUF tensors.
type hfReader struct{ f *gguf.File }

// rows dequantizes rows [first, first+n) of t (its dims[0]-long rows).
func (r hfReader) rows(t *gguf.TensorInfo, first, n uint64) ([]float32, error) {
	rowBytes := uint64(t.Type.RowBytes(int64(t.Dims[0])))
	out := make([]float32, n*t.Dims[0])
	err := quant.Dequantize(t.Type, r.f.Data(t)[first*rowBytes:(first+n)*rowBytes], out)
	return out, err
}

func nRows(t *gguf.TensorInfo) uint64 { return t.Elements() / t.Dims[0] }

// exportType is how a tensor made from sources is stored: bfloat16 where
// every value of each source is exactly a bfloat16 (MXFP4's e2m1 codes
// times a power of two, bf16 itself), halving the export of gpt-oss's
// experts; float32 otherwise. A rounded weight would make the transformers
// golden a different model from the GGUF (at real widths, enough to move
// the router's choices).
func exportType(sources ...*gguf.TensorInfo) gguf.Type {
	for _, t := range sources {
		if t.Type != gguf.MXFP4 && t.Type != gguf.BF16 {
			return gguf.F32
		}
	}
	return gguf.BF16
}

// hfShape is the HF (row-major, outermost first) shape of a GGUF tensor.
func hfShape(t *gguf.TensorInfo) []int {
	s := make([]int, len(t.Dims))
	for i, d := range t.Dims {
		s[len(t.Dims)-1-i] = int(d)
	}
	return s
}

// head is the final norm as model.norm.weight and, unless the head is tied
// to the embeddings (output nil), the LM head as lm_head.weight.
func (r hfReader) head(norm, output *gguf.TensorInfo) []stTensor {
	ts := []stTensor{r.same("model.norm.weight", norm)}
	if output != nil {
		ts = append(ts, r.same("lm_head.weight", output))
	}
	return ts
}

// same exports t unchanged: GGUF [ne1][ne0] is HF's [out, in].
func (r hfReader) same(name string, t *gguf.TensorInfo) stTensor {
	return stTensor{name: name, shape: hfShape(t), dtype: exportType(t), produce: func(emit func([]float32) error) error {
		step := max(1, (1<<20)/t.Dims[0])
		for first := uint64(0); first < nRows(t); first += step {
			vals, err := r.rows(t, first, min(step, nRows(t)-first))
			if err != nil {
				return err
			}
			if err := emit(vals); err != nil {
				return err
			}
		}
		return nil
	}}
}

// transposed exports a GGUF matrix [out][in] as HF's [in, out] (GPT-2's Conv1D).
func (r hfReader) transposed(name string, t *gguf.TensorInfo) stTensor {
	in, out := t.Dims[0], t.Dims[1]
	return stTensor{name: name, shape: []int{int(in), int(out)}, dtype: exportType(t), produce: func(emit func([]float32) error) error {
		vals, err := r.rows(t, 0, out)
		if err != nil {
			return err
		}
		return emit(transpose(vals, int(out), int(in)))
	}}
}

// transpose returns the [cols][rows] transpose of m [rows][cols].
func transpose(m []float32, rows, cols int) []float32 {
	t := make([]float32, len(m))
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			t[j*rows+i] = m[i*cols+j]
		}
	}
	return t
}

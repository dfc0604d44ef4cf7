package compiler

import (
	"fmt"
	"io"
	"os"

	"github.com/llama-orch/orc/codegen/cuda"
	"github.com/llama-orch/orc/compiler/arch"
	"github.com/llama-orch/orc/gguf"
	"github.com/llama-orch/orc/internal/version"
	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/passes"
	"github.com/llama-orch/orc/plans"
	"github.com/llama-orch/orc/tokenizer"
)

// Options are one compilation's inputs.
type Options struct {
	Model     string // GGUF file
	Out       string // plan directory
	Target    string // "cpu" or a CUDA arch like "sm_90"
	MaxTokens int    // largest T of one step (prefill chunk)
	Tokenizer string // optional tokenizer.json stored instead of the GGUF's vocabulary
	DumpAfter string // print the IR after this pass to Dump
	Dump      io.Writer
	EmitOnly  bool // CUDA targets: write the CUDA source without running nvcc
	Verify    bool // verify the IR after every pass
}

// Compile turns a GGUF model into a plan: read → arch.Load → Lower →
// passes → (CUDA: codegen) → plans.Write.
func Compile(o Options) error {
	if o.Out == "" {
		return fmt.Errorf("compiler: no output directory")
	}
	f, err := gguf.Open(o.Model)
	if err != nil {
		return err
	}
	defer f.Close()
	m, err := arch.Load(f)
	if err != nil {
		return err
	}
	g, err := Lower(m, o.MaxTokens)
	if err != nil {
		return err
	}
	if err := passes.Run(g, passes.Options{Target: o.Target, Verify: o.Verify, DumpAfter: o.DumpAfter, Dump: o.Dump}); err != nil {
		return fmt.Errorf("compiler: %w", err)
	}
	tok, err := tokenizerSpec(f, o.Tokenizer, m.H.NVocab)
	if err != nil {
		return err
	}
	man, err := manifest(m, g, o)
	if err != nil {
		return err
	}
	man.Tokenizer = tok
	var extra map[string][]byte
	var placed []int64 // weight offsets the kernels address (GPU targets)
	if passes.IsGPU(o.Target) {
		if extra, err = emitCUDA(g, man, o); err != nil {
			return err
		}
		if o.EmitOnly {
			return writeSource(o.Out, extra[plans.SourceFile])
		}
		for _, t := range man.Tensors {
			placed = append(placed, t.Offset)
		}
	}
	return plans.Write(o.Out, man, func(i int, t *plans.Tensor, w io.Writer) error {
		info, ok := f.Tensor(t.Name)
		if !ok {
			return fmt.Errorf("not in %s", o.Model)
		}
		data := f.Data(info)
		if placed != nil {
			if err := checkOffset(t, placed[i]); err != nil {
				return err
			}
			// GPU layouts regroup quant blocks for aligned loads.
			if data, err = cuda.Relayout(t, data); err != nil {
				return err
			}
		}
		_, err := w.Write(data)
		return err
	}, extra)
}

// tokenizerSpec is the plan's tokenizer: tokenizer.json when given, else the
// GGUF's own vocabulary. Its ids must fit the model's vocab rows.
func tokenizerSpec(f *gguf.File, jsonPath string, vocab int) ([]byte, error) {
	var spec *tokenizer.Spec
	if jsonPath != "" {
		data, err := os.ReadFile(jsonPath)
		if err != nil {
			return nil, fmt.Errorf("compiler: tokenizer: %w", err)
		}
		if spec, err = tokenizer.SpecFromHFJSON(data); err != nil {
			return nil, fmt.Errorf("compiler: %s: %w", jsonPath, err)
		}
	} else {
		var err error
		if spec, err = tokenizer.SpecFromGGUF(f); err != nil {
			return nil, fmt.Errorf("compiler: %s: %w", f.Path, err)
		}
	}
	if len(spec.Tokens) > vocab {
		return nil, fmt.Errorf("compiler: the tokenizer has %d tokens, more than the model's %d vocabulary rows", len(spec.Tokens), vocab)
	}
	return spec.Marshal()
}

// manifest describes the plan of g: model facts, the IR text, the weight
// table in upload order, and the memory plan.
func manifest(m *arch.Model, g *ir.Graph, o Options) (*plans.Manifest, error) {
	h := &m.H
	name, _ := m.File.String("general.name")
	man := &plans.Manifest{
		CompilerVersion: version.Compiler,
		Target:          o.Target,
		Model: plans.Model{
			Name: name, Arch: h.Arch, Params: params(m.File),
			NLayer: h.NLayer, NEmbd: h.NEmbd, NHead: h.NHead, NHeadKV: h.NHeadKV, HeadDim: h.HeadDim,
			Vocab: h.NVocab, ContextLength: h.NCtx, Windows: windows(h),
		},
		Graph: ir.Print(g),
		Memory: plans.Memory{
			MaxTokens:       o.MaxTokens,
			KVBytesPerToken: h.KVBytesPerToken(),
		},
	}
	man.Model.FileType = gguf.FileTypeName(h.FileType)
	if h.FileType == arch.FileTypeUnknown {
		man.Model.FileType = gguf.FileTypeName(guessFileType(m.File))
	}
	if v, ok := g.Attrs["arena_bytes"].(int64); ok {
		man.Memory.ArenaBytes = v
	}
	var err error
	if man.Tensors, err = WeightTable(g, m.File); err != nil {
		return nil, err
	}
	return man, nil
}

// params counts the elements of every tensor in the file.
func params(f *gguf.File) int64 {
	var n int64
	for i := range f.Tensors {
		n += int64(f.Tensors[i].Elements())
	}
	return n
}

// windows lists each layer's sliding window, or nil when no layer slides.
func windows(h *arch.Hparams) []int {
	var w []int
	for i := 0; i < h.NLayer; i++ {
		if h.IsSWA(i) {
			if w == nil {
				w = make([]int, h.NLayer)
			}
			w[i] = h.SlidingWindow
		}
	}
	return w
}

// ftypeOfTensorType is llama.cpp's guess of general.file_type from the
// dominant tensor type (llama_model_loader): K-quants guess their _M mix.
var ftypeOfTensorType = map[gguf.Type]uint32{
	gguf.F32: gguf.FileTypeAllF32, gguf.F16: gguf.FileTypeF16, gguf.BF16: gguf.FileTypeBF16,
	gguf.Q4_0: gguf.FileTypeQ4_0, gguf.Q5_0: gguf.FileTypeQ5_0, gguf.Q8_0: gguf.FileTypeQ8_0,
	gguf.Q4_K: gguf.FileTypeQ4_K_M, gguf.Q5_K: 17 /* MOSTLY_Q5_K_M */, gguf.Q6_K: gguf.FileTypeQ6_K,
	gguf.MXFP4: gguf.FileTypeMXFP4MoE,
}

// guessFileType derives general.file_type for a file that lacks it
// (stories260k is GGUF v1 without it) from its weight matrices: MXFP4
// anywhere means llama.cpp's MXFP4_MOE mix (its quantizer writes MXFP4 in
// no other mode, and the Q8_0 attention matrices outnumber the experts),
// else the most common type of the tensors of two or more dims. llama.cpp
// counts 1-D tensors too, which are F32 whatever the mix and would make a
// quantized gpt-oss "all F32"; "mostly" in its names means except 1-D.
func guessFileType(f *gguf.File) uint32 {
	count := map[gguf.Type]int{}
	best := gguf.F32
	for _, t := range f.Tensors {
		if len(t.Dims) < 2 {
			continue
		}
		if t.Type == gguf.MXFP4 {
			return gguf.FileTypeMXFP4MoE
		}
		count[t.Type]++
		// Ties go to the lower type id so the guess does not depend on
		// tensor order.
		if count[t.Type] > count[best] || (count[t.Type] == count[best] && t.Type < best) {
			best = t.Type
		}
	}
	if ft, ok := ftypeOfTensorType[best]; ok {
		return ft
	}
	return gguf.FileTypeAllF32
}

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
	MaxTokens int    // largest T of one step (prefill chunk); 0: DefaultMaxTokens
	Tokenizer string // optional tokenizer.json stored instead of the GGUF's vocabulary
	DumpAfter string // print the IR after this pass to Dump
	Dump      io.Writer
	EmitOnly  bool // CUDA targets: write the CUDA source without running nvcc
	Verify    bool // verify the IR after every pass
	Force     bool // write the plan even where Out holds something that is not a plan
	// KVCache is the cache's format: "" or "f16", or plans.KVCacheQ8 (int8
	// codes with a scale per kv head: half the bytes).
	KVCache string
}

// DefaultMaxTokens is the prefill step of a plan compiled without one: 512
// tokens, and 2048 for a mixture of experts, whose expert GEMMs then get
// four times the slots per dequantized weight tile (gpt-oss-20b on an H200:
// pp4096 11,052 → 15,955 tok/s, decode unchanged); at most the model's
// context.
func DefaultMaxTokens(h arch.Hparams) int {
	n := 512
	if h.NExpert > 0 {
		n = 2048
	}
	if h.NCtx > 0 {
		n = min(n, h.NCtx)
	}
	return n
}

// Compile turns a GGUF model into a plan: read → arch.Load → Lower →
// passes → (CUDA: codegen) → plans.Write.
func Compile(o Options) error {
	if o.Out == "" {
		return fmt.Errorf("compiler: no output directory")
	}
	if err := checkOut(o); err != nil {
		return err
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
	if o.MaxTokens == 0 {
		o.MaxTokens = DefaultMaxTokens(m.H)
	}
	g, err := Lower(m, o.MaxTokens)
	if err != nil {
		return err
	}
	if err := SetKVCache(g, o.KVCache); err != nil {
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
	return plans.WriteOptions{Force: o.Force}.Write(o.Out, man, func(i int, t *plans.Tensor, w io.Writer) error {
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

// SetKVCache records the KV cache's format on g's attentions (ir
// attribute kv_cache, which the passes and codegen read): "" and "f16"
// keep fp16, plans.KVCacheQ8 stores int8 codes with a scale per kv head.
func SetKVCache(g *ir.Graph, kind string) error {
	switch kind {
	case "", "f16":
		return nil
	case plans.KVCacheQ8:
		for _, n := range g.Nodes {
			if n.Op == ir.OpAttention {
				n.Attrs["kv_cache"] = ir.KVCacheQ8
			}
		}
		return nil
	}
	return fmt.Errorf("compiler: KV cache %q: want f16 or q8", kind)
}

// checkOut refuses, before any work, an output that is the model itself
// (even with Force) or that holds something other than a plan.
func checkOut(o Options) error {
	in, inErr := os.Stat(o.Model)
	if out, err := os.Stat(o.Out); inErr == nil && err == nil && os.SameFile(in, out) {
		return fmt.Errorf("compiler: the output %s is the model being compiled", o.Out)
	}
	return plans.CheckOutput(o.Out, o.Force)
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
			Vocab: h.NVocab, ContextLength: h.NCtx, Windows: windows(h), KVCache: ir.KVCacheOf(g),
		},
		Graph: ir.Print(g),
		Memory: plans.Memory{
			MaxTokens: o.MaxTokens,
		},
	}
	man.Memory.KVBytesPerToken = man.Model.KVBytes(1)
	man.Model.FileType = gguf.FileTypeName(h.FileType)
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

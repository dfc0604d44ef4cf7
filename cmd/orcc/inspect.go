package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"

	"github.com/llama-orch/orc/compiler/arch"
	"github.com/llama-orch/orc/gguf"
	"github.com/llama-orch/orc/internal/cli"
)

type inspectCmd struct {
	File string `arg:"" help:"GGUF file." type:"existingfile"`
	JSON bool   `help:"Print JSON."`
	Ctx  int    `help:"Context length for the KV cache estimate (default: the model's)."`
}

// inspectReport is what inspect prints.
type inspectReport struct {
	File          string         `json:"file"`
	GGUFVersion   uint32         `json:"gguf_version"`
	Architecture  string         `json:"architecture"`
	FileType      string         `json:"file_type"`
	Hparams       arch.Hparams   `json:"hparams"`
	Tensors       int            `json:"tensors"`
	TensorTypes   map[string]int `json:"tensor_types"`
	Params        uint64         `json:"parameters"`
	WeightBytes   uint64         `json:"weight_bytes"`
	Ctx           int            `json:"ctx"`
	KVCacheBytes  int64          `json:"kv_cache_bytes"`
	VRAMBytes     int64          `json:"vram_estimate_bytes"`
	TensorsBound  bool           `json:"tensors_bound"`
	VocabOnlyNote string         `json:"note,omitempty"`
}

// Validate refuses a negative --ctx before the file is read.
func (c *inspectCmd) Validate() error {
	return cli.NotNegative("--ctx", c.Ctx, "the model's context length")
}

func (c *inspectCmd) Run() error {
	r, err := inspect(c.File, c.Ctx)
	if err != nil {
		return err
	}
	if c.JSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	printInspect(r)
	return nil
}

// inspect reads path and computes the report; ctx > 0 overrides the model's
// context for the KV cache estimate.
func inspect(path string, ctx int) (*inspectReport, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	_, h, err := arch.ReadHparams(f)
	if err != nil {
		return nil, err
	}
	r := &inspectReport{File: path, GGUFVersion: f.Version, Architecture: h.Arch, Hparams: *h,
		Tensors: len(f.Tensors), TensorTypes: map[string]int{}, Ctx: h.NCtx, FileType: "unknown"}
	if h.FileType != arch.FileTypeUnknown {
		r.FileType = gguf.FileTypeName(h.FileType)
		if h.FileTypeGuessed {
			r.FileType += " (guessed from the tensor types)"
		}
	}
	if len(f.Tensors) == 0 {
		r.VocabOnlyNote = "no tensors (vocab-only file): hyperparameters only"
	} else if _, err := arch.Load(f); err != nil {
		return nil, err
	} else {
		r.TensorsBound = true
	}
	for i := range f.Tensors {
		t := &f.Tensors[i]
		r.TensorTypes[t.Type.String()]++
		r.Params += t.Elements()
		r.WeightBytes += t.Bytes()
	}
	if ctx > 0 {
		r.Ctx = ctx
	}
	r.KVCacheBytes = h.KVBytesPerToken() * int64(r.Ctx)
	r.VRAMBytes = int64(r.WeightBytes) + r.KVCacheBytes
	return r, nil
}

func printInspect(r *inspectReport) {
	h := &r.Hparams
	fmt.Printf("file           %s (GGUF v%d)\n", r.File, r.GGUFVersion)
	fmt.Printf("architecture   %s\n", r.Architecture)
	fmt.Printf("file type      %s\n", r.FileType)
	fmt.Printf("layers         %d\n", h.NLayer)
	fmt.Printf("embedding      %d\n", h.NEmbd)
	fmt.Printf("heads          %d (kv %d), head dim %d\n", h.NHead, h.NHeadKV, h.HeadDim)
	fmt.Printf("ffn            %d\n", h.NFF)
	if h.NExpert > 0 {
		fmt.Printf("experts        %d, %d used, ffn %d\n", h.NExpert, h.NExpertUsed, h.ExpertFF)
	}
	fmt.Printf("vocab          %d\n", h.NVocab)
	fmt.Printf("context        %d\n", h.NCtx)
	fmt.Printf("norm           %s, eps %.3g\n", h.Norm, h.Eps)
	if h.RopeMode != arch.RopeNone {
		fmt.Printf("rope           %s, base %g, dims %d\n", h.RopeMode, h.RopeBase, h.RopeDims)
	}
	if h.Scaling.Type != "" {
		fmt.Printf("rope scaling   %s, factor %g, original context %d\n", h.Scaling.Type, h.Scaling.Factor, h.Scaling.OrigCtx)
	}
	if h.SlidingWindow > 0 {
		fmt.Printf("sliding window %d\n", h.SlidingWindow)
	}
	if r.VocabOnlyNote != "" {
		fmt.Printf("tensors        %s\n", r.VocabOnlyNote)
		return
	}
	fmt.Printf("output         %s\n", map[bool]string{true: "tied to token_embd", false: "output.weight"}[h.TiedOutput])
	fmt.Printf("tensors        %d:", r.Tensors)
	types := make([]string, 0, len(r.TensorTypes))
	for t := range r.TensorTypes {
		types = append(types, t)
	}
	sort.Strings(types)
	for _, t := range types {
		fmt.Printf(" %s %d", t, r.TensorTypes[t])
	}
	fmt.Println()
	fmt.Printf("parameters     %d (%.3f B)\n", r.Params, float64(r.Params)/1e9)
	fmt.Printf("weight bytes   %d (%.1f MiB)\n", r.WeightBytes, float64(r.WeightBytes)/(1<<20))
	fmt.Printf("KV cache       %d bytes at ctx %d (FP16)\n", r.KVCacheBytes, r.Ctx)
	fmt.Printf("VRAM estimate  %d bytes (%.2f GiB)\n", r.VRAMBytes, float64(r.VRAMBytes)/(1<<30))
}

func init() {
	commands.Add(cli.Command{Name: "inspect", Help: "Show a GGUF model's architecture, hyperparameters, tensor types and VRAM estimate.", Cmd: &inspectCmd{}})
}

package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/llama-orch/orc/codegen/cuda"
	"github.com/llama-orch/orc/compiler"
	"github.com/llama-orch/orc/internal/cli"
	"github.com/llama-orch/orc/plans"
)

type compileCmd struct {
	Model     string `arg:"" type:"existingfile" help:"GGUF model file."`
	Output    string `short:"o" required:"" help:"Plan directory to write: a new path, an empty directory or a plan to replace."`
	Force     bool   `help:"Write the plan even where -o holds something else (a file there is replaced; a directory keeps its other files)."`
	Device    string `enum:"auto,cpu,cuda" default:"auto" help:"Target device: cuda, cpu (reference device), or auto: cuda where nvcc is installed (or with --emit-only), else cpu."`
	Arch      string `default:"sm_90" help:"CUDA architecture to compile for (with --device cuda)."`
	MaxTokens int    `help:"Largest number of tokens in one step (the prefill chunk; default 512, 2048 for a mixture of experts, at most the model's context)."`
	Tokenizer string `type:"existingfile" help:"tokenizer.json to store instead of the GGUF's vocabulary."`
	DumpAfter string `help:"Print the IR after this pass to stderr."`
	EmitOnly  bool   `help:"CUDA: write the kernel sources without running nvcc."`
	Verify    bool   `help:"Verify the IR after every pass (slower; for debugging the compiler)."`
	Launches  bool   `help:"CUDA: also print the decode step's kernel launches, and the batched decode step's, counted by kernel."`
	KVCache   string `enum:"f16,q8" default:"f16" help:"KV cache format: f16, or q8 (int8 with a scale per position and kv head: half the bytes, so twice the tokens in the same VRAM and less to read a decode step)."`
}

func (c *compileCmd) Run() error {
	target := c.Arch
	if c.device() == "cpu" {
		target = "cpu"
	}
	if c.Launches && (target == "cpu" || c.EmitOnly) {
		return errors.New("--launches lists a CUDA plan's decode schedule: it needs --device cuda and no --emit-only")
	}
	err := compiler.Compile(compiler.Options{
		Model: c.Model, Out: c.Output, Force: c.Force, Target: target, MaxTokens: c.MaxTokens, Tokenizer: c.Tokenizer,
		DumpAfter: c.DumpAfter, Dump: os.Stderr, EmitOnly: c.EmitOnly, Verify: c.Verify, KVCache: c.KVCache,
	})
	if errors.Is(err, plans.ErrOccupied) {
		return fmt.Errorf("%w; --force writes the plan there anyway", err)
	}
	if err != nil {
		return err
	}
	if c.EmitOnly && target != "cpu" {
		fmt.Printf("wrote the CUDA source of %s to %s (no plan: --emit-only)\n", target, c.Output)
		return nil
	}
	p, err := plans.Open(c.Output, plans.OpenOptions{SkipWeightHash: true})
	if err != nil {
		return err
	}
	defer p.Close()
	m := &p.Manifest
	model := m.Model.Arch
	if m.Model.FileType != "" {
		model += " " + m.Model.FileType
	}
	fmt.Printf("wrote plan %s (%s, target %s): %s, %.1f MiB; activation arena %.1f MiB at %d tokens; KV cache %d B/token",
		c.Output, model, target, cli.Count(len(m.Tensors), "weight", "weights"), mib(m.Memory.WeightBytes),
		mib(m.Memory.ArenaBytes), m.Memory.MaxTokens, m.Memory.KVBytesPerToken)
	if k := m.Kernels; k != nil {
		fmt.Printf("; %s per decode step", cli.Count(len(k.Decode), "kernel launch", "kernel launches"))
	}
	fmt.Println()
	if c.Launches && m.Kernels != nil {
		fmt.Print(launchReport(m.Kernels))
	}
	return nil
}

// device resolves --device auto: cuda where nvcc can compile the kernels
// (or none is needed: --emit-only), else the CPU reference device, saying so
// on stderr since the plan then runs on no GPU.
func (c *compileCmd) device() string {
	if c.Device != "auto" {
		return c.Device
	}
	if c.EmitOnly {
		return "cuda"
	}
	if _, err := cuda.FindNVCC(); err != nil {
		fmt.Fprintln(os.Stderr, "orcc: --device auto: no nvcc on PATH or under $CUDA_HOME/bin, so compiling for the CPU reference device (--device cuda needs the CUDA toolkit)")
		return "cpu"
	}
	return "cuda"
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

func init() {
	commands.Add(cli.Command{Name: "compile", Help: "Compile a GGUF model into a plan.", Cmd: &compileCmd{}})
}

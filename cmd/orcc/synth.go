package main

import (
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/llama-orch/orc/compiler/synth"
	"github.com/llama-orch/orc/internal/cli"
)

type synthCmd struct {
	Preset string `help:"Preset name (see --list)."`
	Quant  string `help:"Quantisation: q4_k_m, q4_0, mxfp4, f16, f32 (default: the preset's)."`
	Output string `short:"o" help:"Output GGUF file." type:"path"`
	Seed   uint64 `default:"1" help:"Random seed; the same seed gives the same file."`
	Layers int    `help:"Keep only the first N layers (real widths and vocabulary; 0 = all)."`
	HFDir  string `name:"hf-dir" help:"Also write the dequantized weights as Hugging Face safetensors, config.json and tokenizer files here." type:"path"`
	List   bool   `help:"List the presets."`
}

func (c *synthCmd) Run() error {
	if c.List {
		tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "PRESET\tARCH\tQUANT\tDESCRIPTION")
		for _, p := range synth.Presets() {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", p.Name, p.H.Arch, p.DefaultQuant, p.Description)
		}
		return tw.Flush()
	}
	if c.Preset == "" || c.Output == "" {
		return fmt.Errorf("synth needs --preset and -o (or --list)")
	}
	p, err := synth.Lookup(c.Preset)
	if err != nil {
		return err
	}
	if c.Layers != 0 {
		if p, err = p.Cut(c.Layers); err != nil {
			return err
		}
	}
	q := p.DefaultQuant
	if c.Quant != "" {
		if q, err = synth.ParseQuant(c.Quant); err != nil {
			return err
		}
	}
	start := time.Now()
	m, err := synth.Plan(p, q)
	if err != nil {
		return err
	}
	if err := m.WriteFile(c.Output, c.Seed); err != nil {
		return err
	}
	st, err := os.Stat(c.Output)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "synth: %s %s: %d tensors, %d bytes in %.1fs -> %s\n", p.Name, q, len(m.Tensors), st.Size(), time.Since(start).Seconds(), c.Output)
	if c.HFDir != "" {
		start = time.Now()
		if err := synth.WriteHF(c.Output, p, c.HFDir); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "synth: Hugging Face model in %.1fs -> %s\n", time.Since(start).Seconds(), c.HFDir)
	}
	return nil
}

func init() {
	commands.Add(cli.Command{Name: "synth", Help: "Write a synthetic GGUF model of a real shape (random weights, real tokenizer).", Cmd: &synthCmd{}})
}

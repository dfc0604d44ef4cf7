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
	Output string `short:"o" help:"GGUF file to write."`
	Seed   uint64 `default:"1" help:"Random seed; the same seed gives the same file."`
	Layers int    `help:"Keep only the first N layers (real widths and vocabulary; 0 = all)."`
	HFDir  string `name:"hf-dir" help:"Also write the dequantized weights as Hugging Face safetensors, config.json and tokenizer files here."`
	List   bool   `help:"List the presets."`
	Check  string `help:"With --list: only the names of the presets a GPU-host check takes (golden-f32, golden-q4_k_m, golden-f16, full-f16, full-q4_0, full-q4_k_m, bench), one a line."`
	Force  bool   `help:"Replace an existing -o file, and write into a non-empty --hf-dir."`
}

func (c *synthCmd) Run() error {
	if c.Check != "" && !c.List {
		return fmt.Errorf("--check %s lists presets; it needs --list", c.Check)
	}
	if c.Check != "" {
		check, err := synth.ParseCheck(c.Check)
		if err != nil {
			return err
		}
		for _, n := range synth.WithCheck(check) {
			fmt.Println(n)
		}
		return nil
	}
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
	if err := c.checkOutputs(); err != nil {
		return err
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

// checkOutputs refuses, before any work, to replace what the user did not
// ask to: a directory at -o always, an existing file or a non-empty --hf-dir
// without --force.
func (c *synthCmd) checkOutputs() error {
	if st, err := os.Stat(c.Output); err == nil {
		if st.IsDir() {
			return fmt.Errorf("-o %s is a directory; synth writes one GGUF file", c.Output)
		}
		if !c.Force {
			return fmt.Errorf("-o %s exists; --force replaces it", c.Output)
		}
	}
	if c.HFDir == "" || c.Force {
		return nil
	}
	if entries, err := os.ReadDir(c.HFDir); err == nil && len(entries) > 0 {
		return fmt.Errorf("--hf-dir %s is not empty; --force writes into it", c.HFDir)
	}
	return nil
}

func init() {
	commands.Add(cli.Command{Name: "synth", Help: "Write a synthetic GGUF model of a real shape (random weights, real tokenizer).", Cmd: &synthCmd{}})
}

package main

import (
	"errors"
	"fmt"

	"github.com/llama-orch/orc/internal/cli"
	"github.com/llama-orch/orc/plans"
	"github.com/llama-orch/orc/runtime"
	"github.com/llama-orch/orc/runtime/cpu"
	"github.com/llama-orch/orc/runtime/cuda"
	"github.com/llama-orch/orc/tokenizer"
)

// deviceFlags choose the plan and the device every orcrun command runs on.
type deviceFlags struct {
	Plan    string `required:"" type:"existingdir" help:"Plan directory (from orcc compile)."`
	Device  string `enum:",cpu,cuda" default:"" help:"cpu (reference device) or cuda; default: the plan's target."`
	GPU     int    `default:"0" help:"GPU number for the CUDA device."`
	Ctx     int    `help:"Context length a sequence may reach (default: the model's)."`
	Threads int    `help:"CPU device: goroutines per matmul (default: all cores)."`
}

// Validate refuses negative numbers before anything is loaded.
func (f *deviceFlags) Validate() error {
	if err := cli.NotNegative("--ctx", f.Ctx, "the model's context length"); err != nil {
		return err
	}
	if err := cli.NotNegative("--threads", f.Threads, "all cores"); err != nil {
		return err
	}
	if f.GPU < 0 {
		return fmt.Errorf("--gpu %d is negative", f.GPU)
	}
	return nil
}

// contextLength is the context a sequence may reach with plan m: --ctx, at
// most the model's, or the model's.
func (f *deviceFlags) contextLength(m *plans.Manifest) (int, error) {
	n := m.Model.ContextLength
	if n > 0 && f.Ctx > n {
		return 0, fmt.Errorf("--ctx %d is above the model's context length %d", f.Ctx, n)
	}
	if f.Ctx > 0 {
		n = f.Ctx
	}
	return n, nil
}

// deviceKind is the device the flags select for plan target t.
func (f *deviceFlags) deviceKind(target string) string {
	if f.Device != "" {
		return f.Device
	}
	if target == "cpu" {
		return "cpu"
	}
	return "cuda"
}

// deviceName describes the selection before the plan is read.
func (f *deviceFlags) deviceName() string {
	switch f.Device {
	case "cpu":
		return "cpu"
	case "cuda":
		return fmt.Sprintf("cuda:%d", f.GPU)
	}
	return "plan target"
}

// batchable refuses, before the weights load, a plan that cannot run
// steps of several sequences on the device of kind ("cpu", "cuda"): the
// CPU device batches every plan's graph; the CUDA device runs the plan's
// batched step, which plans compiled before it lack.
func batchable(kind string, p *plans.Plan) error {
	if kind != "cuda" || p.Manifest.Kernels != nil && len(p.Manifest.Kernels.Batch) > 0 {
		return nil
	}
	return fmt.Errorf("plan %s has no batched step for the cuda device: recompile it with this orcc (orcc compile) to serve --slots above 1, or serve with --slots 1", p.Dir)
}

// open loads the plan on the selected device; it owns p from then on.
func (f *deviceFlags) open(p *plans.Plan, progress func(pct int)) (runtime.Device, error) {
	if f.deviceKind(p.Manifest.Target) == "cpu" {
		return cpu.Open(p, cpu.Options{Threads: f.Threads, Ctx: f.Ctx})
	}
	return cuda.Open(p, f.GPU, cuda.Options{Ctx: f.Ctx, Progress: progress})
}

// openWithTokenizer runs open, which loads p on a device, with the plan's
// tokenizer loading beside it (a large vocabulary takes a few hundred
// milliseconds, the upload longer). Where the tokenizer fails, the opened
// device is closed again.
func openWithTokenizer(p *plans.Plan, open func() (runtime.Device, error)) (runtime.Device, tokenizer.Tokenizer, error) {
	type loaded struct {
		tok tokenizer.Tokenizer
		err error
	}
	done := make(chan loaded, 1)
	spec := p.Manifest.Tokenizer
	go func() {
		tok, err := tokenizer.Load(spec)
		done <- loaded{tok, err}
	}()
	dev, err := open()
	l := <-done
	if err != nil {
		return nil, nil, err
	}
	if l.err != nil {
		return nil, nil, errors.Join(fmt.Errorf("plan %s: %w", p.Dir, l.err), dev.Close())
	}
	return dev, l.tok, nil
}

package cpu

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/llama-orch/orc/compiler"
	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/plans"
	"github.com/llama-orch/orc/runtime"
)

// tinyLM is a one-layer language model over a 40-token vocabulary:
// embed → rmsnorm → linear → last → linear to logits.
func tinyLM(t *testing.T) *harness {
	t.Helper()
	h := newHarness(4)
	emb := h.weight(t, "token_embd.weight", ir.F32, 1, 40, 32)
	x := h.add(ir.OpEmbed, ir.Shape{ir.T, 32}, nil, emb, h.tokens)
	x = h.add(ir.OpRMSNorm, ir.Shape{ir.T, 32}, map[string]any{"eps": 1e-5}, x, h.weight(t, "norm", ir.F32, 1, 32))
	x = h.add(ir.OpLinear, ir.Shape{ir.T, 32}, nil, x, h.weight(t, "w", ir.Q8_0, 0.5, 32, 32))
	x = h.add(ir.OpLast, ir.Shape{1, 32}, nil, x)
	h.g.Outputs = []*ir.Node{h.add(ir.OpLinear, ir.Shape{1, 40}, nil, x, emb)}
	return h
}

func TestDeviceErrors(t *testing.T) {
	dev, err := Open(tinyLM(t).plan(t), Options{Ctx: 6})
	if err != nil {
		t.Fatal(err)
	}
	if info := dev.Info(); info.Vocab != 40 || info.MaxTokens != 4 || info.ContextLength != 6 || info.Device != "cpu" {
		t.Errorf("info %+v", info)
	}
	if _, err := dev.NewSequence(7); err == nil {
		t.Error("a sequence longer than the device's context was accepted")
	}
	seq, err := dev.NewSequence(6)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range []struct {
		tokens []int32
		want   string
	}{
		{nil, "at least one token"},
		{[]int32{1, 2, 3, 4, 5}, "max_tokens is 4"},
		{[]int32{40}, "outside the vocabulary"},
		{[]int32{-1}, "outside the vocabulary"},
	} {
		if _, err := seq.Forward(ctx, c.tokens); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Forward(%v): %v, want an error containing %q", c.tokens, err, c.want)
		}
	}
	if seq.Pos() != 0 {
		t.Errorf("failed steps moved the position to %d", seq.Pos())
	}
	if _, err := seq.Forward(ctx, []int32{1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	if _, err := seq.Forward(ctx, []int32{5, 6, 7}); !errors.Is(err, runtime.ErrContextFull) {
		t.Errorf("passing the context: %v, want ErrContextFull", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := seq.Forward(cancelled, []int32{5}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled step: %v", err)
	}
	seq.Close()
	if _, err := seq.Forward(ctx, []int32{1}); err == nil {
		t.Error("Forward on a closed sequence succeeded")
	}
	dev.Close()
	if err := dev.CheckResidency(); err == nil {
		t.Error("a closed device reports its weights resident")
	}
}

func TestOpenRefusesBadPlans(t *testing.T) {
	cases := map[string]struct {
		edit func(h *harness)
		want string
	}{
		"gpu target": {func(h *harness) {}, "targets"},
		"missing weight": {func(h *harness) {
			h.tensors = h.tensors[1:]
		}, "does not hold"},
		"weight as activation": {func(h *harness) {
			// The verifier accepts an f32 [1, 32] weight as gelu's
			// operand; the device must not.
			h.add(ir.OpGELU, ir.Shape{1, 32}, nil, h.weight(t, "w1", ir.F32, 1, 1, 32))
		}, "must be an activation"},
		"wrong dtype in the table": {func(h *harness) {
			h.tensors[2].DType = "q4_0"
		}, "in the plan"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			h := tinyLM(t)
			c.edit(h)
			p := h.plan(t)
			if name == "gpu target" {
				p.Manifest.Target = "sm_90"
			}
			_, err := Open(p, Options{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}

// A plan whose hash was deferred (plans.OpenOptions.DeferWeightHash) is
// hashed by Open before any weight is read: altered weights are refused.
func TestOpenVerifiesDeferredHash(t *testing.T) {
	dir := t.TempDir() + "/plan"
	if err := compiler.Compile(compiler.Options{Model: storiesGGUF, Out: dir, Target: "cpu", MaxTokens: 4}); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(dir+"/"+plans.WeightsFile, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte{0x7f}, 1000)
	f.Close()
	p, err := plans.Open(dir, plans.OpenOptions{DeferWeightHash: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, err := Open(p, Options{}); !errors.Is(err, plans.ErrCorrupt) {
		t.Fatalf("got %v, want plans.ErrCorrupt", err)
	}
}

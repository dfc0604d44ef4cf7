// Package cuda generates one CUDA source per plan from kernel templates (one
// template family per kind of kernel, under templates/), with every model
// constant baked in as a template argument, plus the launch schedules the
// runtime replays, the weight re-layouts the kernels expect, and the nvcc
// driver that turns the source into a fatbin.
package cuda

import (
	"fmt"

	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/passes"
	"github.com/llama-orch/orc/plans"
)

// DefaultArch is the CUDA target when Options.Arch is empty (H100/H200).
const DefaultArch = "sm_90"

// Options select the target.
type Options struct {
	Arch string // "sm_80", "sm_90"; "" = DefaultArch
}

// Output is one plan's GPU part.
type Output struct {
	Source  string         // the .cu file (plans.SourceFile)
	Kernels *plans.Kernels // schedules, state layout, logits offset
	// ArenaBytes is the activation arena the schedules address: the graph's
	// arena_bytes plus codegen's scratch (quantized activations, scratch for attention and MoE) after it. The
	// plan's Memory.ArenaBytes must be this.
	ArenaBytes int64
}

// Generate emits the CUDA source and launch schedules for g, whose weights
// are m.Tensors (by name, with their weights.bin offsets placed and their
// layouts). g must have been through the pass pipeline for a GPU target: the
// graph attributes max_tokens and arena_bytes and every value's arena offset
// (planMemory) are read from it. Its first output is the logits.
func Generate(g *ir.Graph, m *plans.Manifest, o Options) (*Output, error) {
	maxTokens, ok := g.Attrs["max_tokens"].(int64)
	if !ok || maxTokens < 1 {
		return nil, fmt.Errorf("codegen/cuda: graph has no positive int64 attribute max_tokens")
	}
	if len(g.Outputs) == 0 {
		return nil, fmt.Errorf("codegen/cuda: graph has no outputs")
	}
	arch := o.Arch
	if arch == "" {
		arch = DefaultArch
	}
	gpu, err := passes.GPUTarget(arch)
	if err != nil {
		return nil, fmt.Errorf("codegen/cuda: %w", err)
	}
	if chosen, _ := g.Attrs["target"].(string); chosen != arch {
		return nil, fmt.Errorf("codegen/cuda: the graph's kernels were chosen for %s, not %s: run the pass pipeline for %s", chosen, arch, arch)
	}
	t := tuning{gpu}
	arenaBytes, ok := g.Attrs["arena_bytes"].(int64)
	if !ok {
		return nil, fmt.Errorf("codegen/cuda: graph has no arena_bytes: run the planMemory pass first")
	}
	attn, err := t.newAttnScratch(g, alignUp(arenaBytes, plans.Alignment))
	if err != nil {
		return nil, fmt.Errorf("codegen/cuda: %w", err)
	}
	prefillAttn := newPrefillArea(g, maxTokens, attn.end)
	gemmSplit := newGEMMSplitArea(g, maxTokens, prefillAttn.end)
	e := &emitter{
		tuning:      t,
		maxTokens:   maxTokens,
		attn:        attn,
		prefillAttn: prefillAttn,
		gemmSplit:   gemmSplit,
		scratchBase: gemmSplit.end,
		model:       m.Model,
		state:       StateLayout(maxTokens),
		output:      g.Outputs[0],
		tensors:     map[string]*plans.Tensor{},
		users:       map[*ir.Node][]*ir.Node{},
		kernels:     newKernelSet(),
	}
	for i := range m.Tensors {
		e.tensors[m.Tensors[i].Name] = &m.Tensors[i]
	}
	// The two schedules differ where a kernel serves several tokens per
	// block in a prefill; kernels both use are emitted once.
	var schedules [2][]plans.Launch // prefill, decode
	var owners []*ir.Node           // each decode launch's node
	for _, n := range g.Nodes {
		for _, in := range n.Inputs {
			e.users[in] = append(e.users[in], n)
		}
	}
	for i := range schedules {
		e.prefill = i == 0
		e.scratchHolds = scratchNone
		for _, n := range g.Nodes {
			ls, err := e.node(n)
			if err != nil {
				return nil, fmt.Errorf("codegen/cuda: node %d (%s): %w", n.ID, n.Op, err)
			}
			if !e.prefill {
				for range ls {
					owners = append(owners, n)
				}
			}
			schedules[i] = append(schedules[i], ls...)
		}
	}
	if err := e.kernels.overlapDecode(schedules[1], owners, gpu.DependentLaunch, arch); err != nil {
		return nil, fmt.Errorf("codegen/cuda: %w", err)
	}
	// The batched step after the others: its instances and configs come
	// after theirs in the source, which stays theirs byte for byte.
	batch, err := e.batch(g)
	if err != nil {
		return nil, err
	}
	kept := schedules[:]
	if batch != nil {
		kept = append(kept, batch.tokens, batch.decode, batch.rows)
	}
	e.kernels.keepLaunched(kept...)
	logits, err := e.value(g.Outputs[0])
	if err != nil || logits.Kind != plans.ArgArena || g.Outputs[0].DType != ir.F32 {
		return nil, fmt.Errorf("codegen/cuda: output node %d (%s) is not an f32 value in the arena", g.Outputs[0].ID, g.Outputs[0].Op)
	}
	e.state.HeadPicks = e.headGreedy
	sampler := e.sampler()
	if e.kernels.conflict != nil {
		return nil, fmt.Errorf("codegen/cuda: %w", e.kernels.conflict)
	}
	src, err := render(sourceData{
		StateT: e.state.T / 4, StateCtx: e.state.Ctx / 4,
		StateSample: e.state.Sample / 4, SampleRecent: plans.SampleRecent,
		MaxTokens: maxTokens,
		Configs:   e.kernels.configs,
		Kernels:   e.kernels.instances,
	})
	if err != nil {
		return nil, fmt.Errorf("codegen/cuda: render: %w", err)
	}
	k := &plans.Kernels{
		Arch:    arch,
		Prefill: schedules[0],
		Decode:  schedules[1],
		State:   e.state,
		Logits:  logits.Offset,
		Sampler: sampler,
		// Every kernel waits on the grid before it (wrappers.cu.tmpl)
		// where the architecture has grid_dep_wait: a plan for an
		// older one, run on a newer GPU, must not let kernels overlap.
		GridDepWait: gpu.DependentLaunch,
	}
	if batch != nil {
		k.Batch, k.BatchRows, k.BatchMaxRows = batch.tokens, batch.rows, int(batch.maxRows)
		k.BatchDecode, k.BatchDecodeMaxRows, k.BatchFew = batch.decode, int(batch.decodeRows), batch.few
		k.BatchBytes, k.BatchLogits = batch.bytes, batch.logits
	}
	return &Output{Source: src, Kernels: k, ArenaBytes: e.scratchBase + e.scratchBytes}, nil
}

// tuning is the compile target's description (passes.GPU) that the
// kernels' tuning decisions read.
type tuning struct{ passes.GPU }

// emitter turns nodes into kernel instances and launches.
type emitter struct {
	tuning
	maxTokens    int64
	attn         attnScratch   // the decode attentions' partials and counters, after the planned buffers
	prefillAttn  prefillArea   // the prefill attentions' partials and counters, after attn
	gemmSplit    gemmSplitArea // the split GEMMs' partials and counters, after prefillAttn
	scratchBase  int64         // arena offset of codegen's scratch (quantized activations, MoE), after gemmSplit
	scratchBytes int64         // the most scratch one launch pair needs
	prefill      bool          // emitting the prefill schedule (else decode)
	// batching: emitting the batched step (with prefill set: its kernels
	// are the prefill's but where a step holds several sequences).
	batching bool
	// batchDecode: emitting the batched step's schedule for decode tokens
	// alone (with batching set: its matrix kernels are batch_decode_kernel),
	// or with pagedTiles, for a few tokens in any rows (attention by tiles
	// of a row's tokens, as the batched step's).
	batchDecode, pagedTiles bool
	// pagedCounters: where the batch region holds attend_paged's arrival
	// counters, after its partials (pagedScratch).
	pagedCounters int64
	// stateAt is where the state argument of each launch points in the
	// state block: 0, or the batch's rows header for its per-row launches.
	stateAt int64
	// batchValues are the values the batched step keeps in the batch
	// region (its per-row clones'), which value reads first.
	batchValues map[*ir.Node]plans.Arg
	// scratchHolds is the value whose quantized form (xq_t codes, scales) the scratch holds at
	// this point of the schedule, and where.
	scratchHolds scratchX
	output       *ir.Node                // the graph's output, the logits
	headGreedy   bool                    // the LM head leaves the greedy pick (leavesGreedy)
	users        map[*ir.Node][]*ir.Node // each node's readers
	model        plans.Model
	state        plans.State
	tensors      map[string]*plans.Tensor
	kernels      *kernelSet
}

// scheduleName is the schedule being emitted, for errors.
func (e *emitter) scheduleName() string {
	if e.batchDecode && e.pagedTiles {
		return "batched step of few tokens"
	}
	if e.batchDecode {
		return "batched decode step"
	}
	if e.batching {
		return "batched step"
	}
	if e.prefill {
		return "prefill"
	}
	return "decode"
}

// node emits the launches of one node (none for inputs, weights and views).
func (e *emitter) node(n *ir.Node) ([]plans.Launch, error) {
	info, ok := ir.Ops[n.Op]
	if !ok {
		return nil, fmt.Errorf("unknown op")
	}
	if len(n.Inputs) < info.MinInputs || len(n.Inputs) > info.MaxInputs {
		return nil, fmt.Errorf("%d inputs, want %d to %d", len(n.Inputs), info.MinInputs, info.MaxInputs)
	}
	switch n.Op {
	case ir.OpLinear, ir.OpQKV, ir.OpSwiGLULinear, ir.OpMoE:
		if e.kernelOf(n) == "" {
			return nil, fmt.Errorf("no kernel recorded for its %s: run the chooseKernels pass", e.scheduleName())
		}
	}
	switch n.Op {
	case ir.OpInput, ir.OpWeight, ir.OpView:
		return nil, nil
	case ir.OpLinear:
		return e.linear(n)
	case ir.OpQKV:
		return e.qkv(n)
	case ir.OpSwiGLULinear:
		return e.swigluLinear(n)
	case ir.OpEmbed:
		return e.embed(n)
	case ir.OpRMSNorm, ir.OpAddRMSNorm, ir.OpLayerNorm, ir.OpAddLayerNorm, ir.OpAddPostNorm:
		return e.norm(n)
	case ir.OpAdd, ir.OpSwiGLU, ir.OpGELU, ir.OpSplit, ir.OpLast:
		return e.elementwise(n)
	case ir.OpRoPE:
		return e.rope(n)
	case ir.OpAttention:
		return e.attention(n)
	case ir.OpMoE:
		return e.moe(n)
	case ir.OpHeadRMSNorm, ir.OpNormRoPE:
		return e.headNorm(n)
	case ir.OpGEGLU:
		return e.geglu(n)
	case ir.OpScale:
		return e.scale(n)
	}
	return nil, fmt.Errorf("op %s has no CUDA kernel yet", n.Op)
}

package cpu

import (
	"context"
	"fmt"

	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/plans"
)

// program is a verified graph bound to its weights and activation buffers:
// one kernel closure per node, run in schedule order.
type program struct {
	maxTokens int
	threads   int
	vocab     int
	// arena backs every activation when the graph was memory-planned (graph
	// attr arena_bytes, node attr offset); nil when each node has its own
	// buffer.
	arena   []float32
	bufs    map[*ir.Node][]float32 // f32 nodes: buffer at max_tokens rows
	weights map[*ir.Node]*weight
	kv      []kvShape // by layer; width 0 where no attention node is
	steps   []step
	output  *ir.Node // [1, vocab]
	// route is the device's Route option (nil: none); moes counts the
	// MoE nodes bound so far, each one's index for it.
	route func(*Routing)
	moes  int
}

// kvShape is one layer's cache row width: kv_heads·head_dim.
type kvShape struct{ width int }

type step struct {
	node *ir.Node
	run  func(st *stepState) error
}

// stepState is one step's inputs: T tokens at positions, and the caches
// attention reads and writes: one sequence's (kv, Forward), or a batch's,
// each row's sequence named by rowSeq.
type stepState struct {
	t         int
	tokens    []int32 // [T]
	positions []int32 // [T]: pos0 .. pos0+T-1 for one sequence; each row's own in a batch
	kv        *kvCache
	seqs      []kvCache // a batch's sequences
	rowSeq    []int32   // [T] index into seqs; nil when every row is kv's
	// decodeRows: linear ops decode weight rows even for one row (project):
	// a batch's steps and its solo sequence's.
	decodeRows bool
}

// cacheOf is the cache of row t's sequence.
func (st *stepState) cacheOf(t int) *kvCache {
	if st.rowSeq == nil {
		return st.kv
	}
	return &st.seqs[st.rowSeq[t]]
}

// newProgram verifies the plan's graph and binds it.
func newProgram(p *plans.Plan, g *ir.Graph, threads int) (*program, error) {
	return bindProgram(p, g, threads, false)
}

// bindProgram verifies g and binds it: for one sequence's steps (logits
// [1, vocab]), or batched (logits [T, vocab], one row per sequence; see
// batchGraph).
func bindProgram(p *plans.Plan, g *ir.Graph, threads int, batched bool) (*program, error) {
	if err := ir.Verify(g); err != nil {
		return nil, fmt.Errorf("cpu: the plan's graph does not verify: %w", err)
	}
	rows, want := int64(1), "[1, vocab]"
	if batched {
		rows, want = ir.T, "[T, vocab]"
	}
	if len(g.Outputs) != 1 || len(g.Outputs[0].Shape) != 2 || g.Outputs[0].Shape[0] != rows {
		return nil, fmt.Errorf("cpu: the graph must have one output of logits %s", want)
	}
	pr := &program{
		maxTokens: int(g.Attrs["max_tokens"].(int64)), // Verify checked it
		threads:   threads,
		bufs:      map[*ir.Node][]float32{},
		weights:   map[*ir.Node]*weight{},
		output:    g.Outputs[0],
	}
	pr.vocab = int(pr.output.Shape[1])
	for _, n := range g.Nodes {
		if n.Op != ir.OpWeight {
			continue
		}
		w, err := loadWeight(p, n)
		if err != nil {
			return nil, err
		}
		pr.weights[n] = w
	}
	if err := pr.bindBuffers(g); err != nil {
		return nil, err
	}
	for _, n := range g.Nodes {
		if err := pr.checkOperands(n); err != nil {
			return nil, fmt.Errorf("cpu: %%%d %s: %w", n.ID, n.Op, err)
		}
		run, err := pr.kernel(n)
		if err != nil {
			return nil, fmt.Errorf("cpu: %%%d %s: %w", n.ID, n.Op, err)
		}
		if run != nil {
			pr.steps = append(pr.steps, step{node: n, run: run})
		}
	}
	return pr, nil
}

// capacity is the number of f32 elements n's buffer holds at max_tokens.
func (pr *program) capacity(n *ir.Node) int {
	if ir.Ops[n.Op].Packed {
		total := int64(0)
		for _, c := range n.Ints("parts") {
			total += c
		}
		return pr.maxTokens * int(total)
	}
	return int(n.Shape.Elems(int64(pr.maxTokens)))
}

// partOffset is where part i of a packed node starts: max_tokens rows of
// every earlier part.
func (pr *program) partOffset(n *ir.Node, part int) int {
	off := int64(0)
	for _, c := range n.Ints("parts")[:part] {
		off += c
	}
	return pr.maxTokens * int(off)
}

// bindBuffers gives every f32 activation its buffer: a slice of the arena
// at the planned offset, or its own allocation. Views alias their parts.
func (pr *program) bindBuffers(g *ir.Graph) error {
	arenaBytes, planned := g.Attrs["arena_bytes"].(int64)
	if planned {
		if arenaBytes < 0 || arenaBytes%4 != 0 {
			return fmt.Errorf("cpu: arena_bytes %d is not a whole number of f32", arenaBytes)
		}
		pr.arena = make([]float32, arenaBytes/4)
	}
	start := map[*ir.Node]int{} // element offset in the arena
	for _, n := range g.Nodes {
		switch {
		case n.Op == ir.OpWeight || n.DType != ir.F32:
			continue
		case n.Op == ir.OpView:
			src := n.Inputs[0]
			off := pr.partOffset(src, int(n.Int("part")))
			pr.bufs[n] = pr.bufs[src][off : off+pr.capacity(n)]
			start[n] = start[src] + off
			if at, ok := n.Attrs["offset"].(int64); ok && planned && at != int64(start[n])*4 {
				return fmt.Errorf("cpu: view %%%d is planned at offset %d, but part %d of %%%d lies at %d", n.ID, at, n.Int("part"), src.ID, start[n]*4)
			}
			continue
		case !planned:
			pr.bufs[n] = make([]float32, pr.capacity(n))
			continue
		}
		off, ok := n.Attrs["offset"].(int64)
		if !ok {
			return fmt.Errorf("cpu: the graph is memory-planned but %%%d %s has no offset", n.ID, n.Op)
		}
		size := int64(pr.capacity(n))
		if off < 0 || off%4 != 0 || off/4+size > int64(len(pr.arena)) {
			return fmt.Errorf("cpu: %%%d %s at offset %d (%d bytes) does not fit the %d-byte arena", n.ID, n.Op, off, size*4, arenaBytes)
		}
		start[n] = int(off / 4)
		pr.bufs[n] = pr.arena[off/4 : off/4+size]
		if err := checkAliasing(n, start, pr.bufs); err != nil {
			return err
		}
	}
	return nil
}

// inPlaceOps may write over an input of the same shape at the same offset:
// they read each element (or row) before writing it.
var inPlaceOps = map[ir.Op]bool{ir.OpAdd: true, ir.OpGELU: true, ir.OpRoPE: true, ir.OpRMSNorm: true, ir.OpLayerNorm: true,
	ir.OpHeadRMSNorm: true, ir.OpNormRoPE: true, ir.OpGEGLU: true, ir.OpScale: true}

// checkAliasing rejects a planned buffer that overlaps one of its node's
// inputs, except an exact in-place reuse by an op that allows it: such a
// plan would corrupt the inputs while computing.
func checkAliasing(n *ir.Node, start map[*ir.Node]int, bufs map[*ir.Node][]float32) error {
	lo, hi := start[n], start[n]+len(bufs[n])
	for _, in := range n.Inputs {
		b, ok := bufs[in]
		if !ok {
			continue
		}
		ilo, ihi := start[in], start[in]+len(b)
		if ihi <= lo || hi <= ilo {
			continue
		}
		if inPlaceOps[n.Op] && ilo == lo && ihi == hi {
			continue
		}
		return fmt.Errorf("cpu: the memory plan overlaps %%%d %s [%d, %d) with its input %%%d [%d, %d) (bytes)",
			n.ID, n.Op, lo*4, hi*4, in.ID, ilo*4, ihi*4)
	}
	return nil
}

// run executes one step and returns the logits buffer [vocab].
func (pr *program) run(ctx context.Context, st *stepState) ([]float32, error) {
	for _, s := range pr.steps {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := s.run(st); err != nil {
			return nil, fmt.Errorf("cpu: %%%d %s: %w", s.node.ID, s.node.Op, err)
		}
	}
	return pr.bufs[pr.output][:pr.vocab], nil
}

// rows is n's row count at T tokens (activations are [rows, cols]).
func rows(n *ir.Node, t int) int {
	if n.Shape[0] == ir.T {
		return t
	}
	return int(n.Shape[0])
}

// cols is n's row width.
func cols(n *ir.Node) int { return int(n.Shape[len(n.Shape)-1]) }

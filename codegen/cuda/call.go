package cuda

import (
	"fmt"

	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/plans"
)

// call builds a kernel's parameters, its device call's arguments and the
// launch's arguments side by side.
type call struct {
	params     []param
	args       []string
	largs      []plans.Arg
	err        error
	startsLate bool  // the kernel's instance.StartsLate: its node's starts_late (chooseLateStarts)
	cluster    int64 // the kernel's instance.Cluster
}

const (
	cWeight = "const uint8_t* __restrict__"
	cIn     = "const float* __restrict__"
	cOut    = "float* __restrict__"
	cInts   = "const int* __restrict__"
	cCache  = "__half* __restrict__"
	cXq     = "const xq_t* __restrict__"
	cScales = "const float2* __restrict__"
)

// ptr adds a pointer parameter for node n.
func (c *call) ptr(e *emitter, ctype, name string, n *ir.Node) {
	a, err := e.value(n)
	if err != nil && c.err == nil {
		c.err = err
	}
	c.arg(ctype, name, a)
}

// arg adds a pointer parameter with a known launch argument.
func (c *call) arg(ctype, name string, a plans.Arg) {
	c.params = append(c.params, param{ctype, name})
	c.args = append(c.args, name)
	c.largs = append(c.largs, a)
}

// null passes nullptr to the device function (an absent optional input).
func (c *call) null() { c.args = append(c.args, "nullptr") }

// stateArg is the whole step-state block (kernels read T from it), or
// from stateAt on (a batched step's rows header).
func (e *emitter) stateArg(c *call) {
	c.arg(cInts, "state", plans.Arg{Kind: plans.ArgState, Offset: e.stateAt})
}

// emit registers the kernel (device template fn, its family's template
// arguments targs) and returns its one launch.
func (e *emitter) emit(c *call, fn string, threads int, g grid, targs any) ([]plans.Launch, error) {
	return e.emitBounded(c, fn, threads, 0, g, targs)
}

// emitBounded is emit for a kernel whose registers must let minBlocks
// blocks share an SM.
func (e *emitter) emitBounded(c *call, fn string, threads, minBlocks int, g grid, targs any) ([]plans.Launch, error) {
	if c.err != nil {
		return nil, c.err
	}
	k := &instance{Threads: threads, MinBlocks: minBlocks, Cluster: c.cluster, StartsLate: c.startsLate, Params: c.params, Fn: fn, TArgs: targs, Args: c.args}
	return []plans.Launch{e.launch(k, g, c.largs...)}, nil
}

// matrix checks a weight [out, in] against the input width and returns its
// accessor and out.
func (e *emitter) matrix(w *ir.Node, in int64) (accessor, int64, error) {
	if len(w.Shape) != 2 || w.Shape[1] != in {
		return noWeight, 0, fmt.Errorf("weight %q is %v, want [out, %d]", w.Str("name"), w.Shape, in)
	}
	acc, err := e.accessor(w)
	return acc, w.Shape[0], err
}

// bias is the accessor of an optional bias input (B_none when absent) and
// adds its parameter.
func (e *emitter) bias(c *call, b *ir.Node, out int64, name string) accessor {
	if b == nil {
		c.null()
		return noWeight
	}
	acc, err := e.vectorAccessor(b, out)
	if err != nil && c.err == nil {
		c.err = err
	}
	c.ptr(e, cWeight, name, b)
	return acc
}

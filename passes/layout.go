package passes

import "github.com/llama-orch/orc/ir"

// The layout passes, one per quantized weight family, run for GPU targets
// only. Each marks the weights of its dtype that matrix kernels read
// (linear, qkv, swiglu_linear, moe) with layout="gpu_<dtype>": codegen/cuda
// defines that byte order (blocks re-tiled for coalesced loads) and
// rewrites the bytes when it writes the plan. embed reads its table
// through the same accessors, so a tied embedding table (embed and the LM
// head) takes the layout too; a weight that any other op also reads keeps
// the GGUF order.
var (
	layoutQ4_0  = layoutPass(ir.Q4_0)
	layoutQ5_0  = layoutPass(ir.Q5_0)
	layoutQ8_0  = layoutPass(ir.Q8_0)
	layoutQ4K   = layoutPass(ir.Q4_K)
	layoutQ5K   = layoutPass(ir.Q5_K)
	layoutQ6K   = layoutPass(ir.Q6_K)
	layoutMXFP4 = layoutPass(ir.MXFP4)
)

// matrixOps read weights through a matrix kernel.
var matrixOps = map[ir.Op]bool{ir.OpLinear: true, ir.OpQKV: true, ir.OpSwiGLULinear: true, ir.OpMoE: true}

// LayoutName is the layout a layout pass gives weights of dtype d.
func LayoutName(d ir.DType) string { return "gpu_" + d.String() }

func layoutPass(d ir.DType) func(*ir.Graph) error {
	return func(g *ir.Graph) error {
		onlyMatrix := map[*ir.Node]bool{}
		for _, n := range g.Nodes {
			for _, in := range n.Inputs {
				if in.Op != ir.OpWeight || in.DType != d {
					continue
				}
				prev, seen := onlyMatrix[in]
				laidOut := matrixOps[n.Op] || n.Op == ir.OpEmbed && n.Inputs[0] == in
				onlyMatrix[in] = laidOut && (prev || !seen)
			}
		}
		for w, ok := range onlyMatrix {
			if ok {
				w.Attrs["layout"] = LayoutName(d)
			}
		}
		return nil
	}
}

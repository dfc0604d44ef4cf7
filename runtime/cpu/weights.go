package cpu

import (
	"fmt"

	"github.com/llama-orch/orc/gguf"
	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/plans"
	"github.com/llama-orch/orc/quant"
)

// storageType maps the IR's weight dtypes to ggml block types.
var storageType = map[ir.DType]gguf.Type{
	ir.F32: gguf.F32, ir.F16: gguf.F16, ir.BF16: gguf.BF16,
	ir.Q4_0: gguf.Q4_0, ir.Q5_0: gguf.Q5_0, ir.Q8_0: gguf.Q8_0,
	ir.Q4_K: gguf.Q4_K, ir.Q5_K: gguf.Q5_K, ir.Q6_K: gguf.Q6_K, ir.MXFP4: gguf.MXFP4,
}

// weight is one tensor of the plan's blob, read in place. A weight of shape
// [..., rows, cols] is a stack of rows of cols elements, each rowBytes long.
type weight struct {
	name     string
	typ      gguf.Type
	shape    ir.Shape
	data     []byte
	cols     int
	rowBytes int
	// dense is the whole tensor dequantized, kept for the small tensors
	// that ops read elementwise (norm weights, biases, sinks).
	dense []float32
}

// loadWeight finds n's tensor in the plan and checks it against the node;
// a row-range node (ir weight rows) reads its span of the tensor.
func loadWeight(p *plans.Plan, n *ir.Node) (*weight, error) {
	name := n.Str("name")
	data, t, ok := p.TensorData(name)
	if !ok {
		return nil, fmt.Errorf("cpu: the graph needs weight %s, which the plan does not hold", name)
	}
	stored := ir.Shape(t.Shape)
	if first, count, ranged := n.RowRange(); ranged && len(stored) > 0 {
		start, size, err := t.Rows(first, count)
		if err != nil {
			return nil, fmt.Errorf("cpu: weight node %%%d: %w", n.ID, err)
		}
		data = data[start : start+size]
		stored = append(ir.Shape{count}, stored[1:]...)
	}
	if t.DType != n.DType.String() || !stored.Equal(n.Shape) {
		return nil, fmt.Errorf("cpu: weight %s is %s%v in the plan, %s%v in the graph", name, t.DType, stored, n.DType, n.Shape)
	}
	if t.Layout != "" || n.Str("layout") != "" {
		return nil, fmt.Errorf("cpu: weight %s has GPU layout %q; compile the plan with --device cpu", name, t.Layout+n.Str("layout"))
	}
	typ, ok := storageType[n.DType]
	if !ok {
		return nil, fmt.Errorf("cpu: weight %s has dtype %s, which is not a storage type", name, n.DType)
	}
	if len(n.Shape) == 0 {
		return nil, fmt.Errorf("cpu: weight %s has no dimensions", name)
	}
	cols := n.Shape[len(n.Shape)-1]
	if cols%int64(typ.BlockSize()) != 0 {
		return nil, fmt.Errorf("cpu: weight %s rows of %d elements are not whole %v blocks", name, cols, typ)
	}
	rows := n.Shape.Elems(1) / cols
	rowBytes := typ.RowBytes(cols)
	if int64(len(data)) != rows*rowBytes {
		return nil, fmt.Errorf("cpu: weight %s holds %d bytes, %s%v needs %d", name, len(data), n.DType, n.Shape, rows*rowBytes)
	}
	return &weight{name: name, typ: typ, shape: n.Shape, data: data, cols: int(cols), rowBytes: int(rowBytes)}, nil
}

// row returns the encoded bytes of row r.
func (w *weight) row(r int) []byte { return w.data[r*w.rowBytes : (r+1)*w.rowBytes] }

// dequantRow decodes row r into out [cols].
func (w *weight) dequantRow(r int, out []float32) error {
	return quant.Dequantize(w.typ, w.row(r), out)
}

// makeDense decodes the whole tensor once.
func (w *weight) makeDense() error {
	if w.dense != nil {
		return nil
	}
	d := make([]float32, len(w.data)/w.rowBytes*w.cols)
	if err := quant.Dequantize(w.typ, w.data, d); err != nil {
		return fmt.Errorf("cpu: weight %s: %w", w.name, err)
	}
	w.dense = d
	return nil
}

package cuda

import (
	_ "embed"
	"encoding/binary"
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/llama-orch/orc/plans"
)

// toy.ptx is testdata/toy.cu compiled by nvcc (see there): a toy model that
// exercises every argument kind, T-dependent grids and the KV cache.
//
//go:embed testdata/toy.ptx
var toyPTX []byte

// toy is the shape of a toy plan.
type toy struct {
	vocab, dim, maxTokens, ctx int
	padBytes                   int64 // extra weight bytes, for upload tests
}

func (c toy) emb(tok, j int) float32 { return float32((tok*7+j*3)%32-16) / 8 } // exact in fp16

func (c toy) head() []float32 {
	r := rand.New(rand.NewPCG(1, 2))
	h := make([]float32, c.vocab*c.dim) // [vocab][dim]
	for i := range h {
		h[i] = r.Float32()*2 - 1
	}
	return h
}

// manifest lays the toy plan out; weight offsets follow plans.Write's rule
// (table order, each Alignment-aligned), checked after writing.
func (c toy) manifest() *plans.Manifest {
	tb := int64(4 * c.vocab * c.dim)
	embOff, headOff := int64(0), align(tb)
	tensors := []plans.Tensor{
		{Name: "emb", DType: "f32", Shape: []int64{int64(c.vocab), int64(c.dim)}, Bytes: tb, Offset: embOff},
		{Name: "head", DType: "f32", Shape: []int64{int64(c.vocab), int64(c.dim)}, Bytes: tb, Offset: headOff},
	}
	if c.padBytes > 0 {
		tensors = append(tensors, plans.Tensor{Name: "pad", DType: "u8", Shape: []int64{c.padBytes}, Bytes: c.padBytes, Offset: headOff + align(tb)})
	}
	maxT := int64(c.maxTokens)
	st := plans.State{T: 0, Pos0: 4, Ctx: 8, Tokens: 16, Positions: 16 + 4*maxT, Bytes: 16 + 8*maxT}
	accOff, logitsOff := int64(0), align(int64(4*c.dim))
	D := int64(c.dim)
	kvK, kvV := int64(0), 2*D // layer 0, ctx = 1
	w := func(o int64) plans.Arg { return plans.Arg{Kind: plans.ArgWeight, Offset: o} }
	a := func(o int64) plans.Arg { return plans.Arg{Kind: plans.ArgArena, Offset: o} }
	s := func(o int64) plans.Arg { return plans.Arg{Kind: plans.ArgState, Offset: o} }
	kv := func(o int64) plans.Arg { return plans.Arg{Kind: plans.ArgKV, Offset: o} }
	n := func(v int64) plans.Arg { return plans.Arg{Kind: plans.ArgInt, Value: v} }
	sched := []plans.Launch{
		{Kernel: "toy_store", GridA: [3]int64{1, 0, 0}, GridB: [3]int64{0, 1, 1}, Block: [3]int{c.dim, 1, 1},
			Args: []plans.Arg{s(st.T), s(st.Tokens), s(st.Positions), w(embOff), kv(kvK), kv(kvV), n(D)}},
		{Kernel: "toy_reduce", GridB: [3]int64{1, 1, 1}, Block: [3]int{c.dim, 1, 1},
			Args: []plans.Arg{s(st.T), s(st.Pos0), kv(kvK), kv(kvV), a(accOff), n(D)}},
		{Kernel: "toy_head", GridB: [3]int64{int64(c.vocab), 1, 1}, GridDiv: [3]int64{128, 0, 0}, Block: [3]int{128, 1, 1},
			Args: []plans.Arg{w(headOff), a(accOff), a(logitsOff), n(D), n(int64(c.vocab))}},
	}
	return &plans.Manifest{
		CompilerVersion: "test", Target: "sm_80",
		Model:   plans.Model{Name: "toy", Arch: "toy", FileType: "F32", NLayer: 1, NEmbd: c.dim, NHead: 1, NHeadKV: 1, HeadDim: c.dim, Vocab: c.vocab, ContextLength: c.ctx},
		Tensors: tensors,
		Memory:  plans.Memory{MaxTokens: c.maxTokens, ArenaBytes: logitsOff + int64(4*c.vocab), KVBytesPerToken: 4 * D},
		Kernels: &plans.Kernels{Arch: "sm_80", Prefill: sched, Decode: sched, State: st, Logits: logitsOff},
	}
}

// write writes the toy plan under t's temp dir and opens it.
func (c toy) write(t testing.TB) *plans.Plan {
	t.Helper()
	m := c.manifest()
	want := append([]plans.Tensor(nil), m.Tensors...)
	head := c.head()
	pad := rand.New(rand.NewPCG(3, 4))
	dir := filepath.Join(t.TempDir(), "toy")
	err := plans.Write(dir, m, func(i int, ts *plans.Tensor, w io.Writer) error {
		var buf []byte
		switch ts.Name {
		case "emb":
			for tok := range c.vocab {
				for j := range c.dim {
					buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(c.emb(tok, j)))
				}
			}
		case "head":
			for _, v := range head {
				buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
			}
		case "pad":
			buf = make([]byte, ts.Bytes)
			for k := 0; k+8 <= len(buf); k += 8 {
				binary.LittleEndian.PutUint64(buf[k:], pad.Uint64())
			}
		}
		_, err := w.Write(buf)
		return err
	}, map[string][]byte{plans.KernelsFile: toyPTX})
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if m.Tensors[i].Offset != want[i].Offset {
			t.Fatalf("plans.Write put %s at %d, the toy schedule assumes %d", want[i].Name, m.Tensors[i].Offset, want[i].Offset)
		}
	}
	p, err := plans.Open(dir, plans.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// logits is the toy model's result after history (all tokens so far, at
// positions 0..), in float64.
func (c toy) logits(history []int32) []float64 {
	last := len(history) - 1
	acc := make([]float64, c.dim)
	for j := range acc {
		acc[j] = float64(last + j)
		for _, tok := range history {
			acc[j] += float64(c.emb(int(tok), j))
		}
	}
	head := c.head()
	out := make([]float64, c.vocab)
	for v := range out {
		for j := range acc {
			out[v] += float64(head[v*c.dim+j]) * acc[j]
		}
	}
	return out
}

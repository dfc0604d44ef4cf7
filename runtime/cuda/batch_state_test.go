package cuda

import (
	"encoding/binary"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/llama-orch/orc/plans"
	"github.com/llama-orch/orc/runtime"
)

// testBatchState is a state block laid out as codegen/cuda lays a plan of
// max_tokens 8 and 4 batched rows: the single-sequence fields, then the
// batch's.
var testBatchState = plans.State{Bytes: 256, T: 0, Pos0: 4, Ctx: 8, Tokens: 16, Positions: 48,
	Rows: 256, Paging: 272, RowOf: 288, LastTokens: 320, Picks: 336, Tables: 368}

// le32s are the first k little-endian int32 of b.
func le32s(b []byte, k int) []int32 {
	out := make([]int32, k)
	for i := range out {
		out[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

func TestWriteBatchState(t *testing.T) {
	st := testBatchState
	l := batchLimits{rows: 4, tokens: 8, blockTokens: 4, stride: 5, blocks: 8, ctx: 20, vocab: 100}
	b := make([]byte, batchStateBytes(&st, l.rows, l.stride))
	for i := range b {
		b[i] = 0xAA // a stale image: every field read must be written
	}
	rows := []runtime.BatchRow{
		{Tokens: []int32{11, 12, 13}, Pos: 5, Blocks: []int32{7, 2}},      // a prefill chunk, positions 5..7
		{Tokens: []int32{42}, Pos: 16, Blocks: []int32{0, 1, 4, 6, 3, 5}}, // decode; its table is longer than it needs
	}
	tokens, n, err := writeBatchState(b, &st, &l, rows, 0)
	if err != nil {
		t.Fatal(err)
	}
	if tokens != 4 || n != st.Tables+2*5*4 {
		t.Fatalf("%d tokens, %d bytes to copy; want 4, %d", tokens, n, st.Tables+2*5*4)
	}
	ints := func(off int64, k int) []int32 { return le32s(b[off:], k) }
	for _, f := range []struct {
		name string
		got  []int32
		want []int32
	}{
		{"t", ints(st.T, 1), []int32{4}},
		{"tokens", ints(st.Tokens, 4), []int32{11, 12, 13, 42}},
		{"positions", ints(st.Positions, 4), []int32{5, 6, 7, 16}},
		{"row_of", ints(st.RowOf, 4), []int32{0, 0, 0, 1}},
		{"last_tokens", ints(st.LastTokens, 2), []int32{2, 3}},
		{"rows header", ints(st.Rows, 4), []int32{2, 0, 0, 0}},
		{"paging", ints(st.Paging, 2), []int32{4, 5}},
		{"row 0's table", ints(st.Tables, 2), []int32{7, 2}},
		{"row 1's table", ints(st.Tables+4*5, 5), []int32{0, 1, 4, 6, 3}},
	} {
		if !slices.Equal(f.got, f.want) {
			t.Errorf("%s: %v, want %v", f.name, f.got, f.want)
		}
	}
}

func TestWriteBatchStateRefuses(t *testing.T) {
	st := testBatchState
	l := batchLimits{rows: 2, tokens: 4, blockTokens: 4, stride: 5, blocks: 8, ctx: 20, vocab: 100}
	row := func(tokens, pos int, blocks ...int32) runtime.BatchRow {
		return runtime.BatchRow{Tokens: make([]int32, tokens), Pos: pos, Blocks: blocks}
	}
	for _, c := range []struct {
		name string
		rows []runtime.BatchRow
		want error
		msg  string
	}{
		{"no rows", nil, runtime.ErrBatchRows, "a step of 0 rows"},
		{"too many rows", []runtime.BatchRow{row(1, 0, 0), row(1, 0, 1), row(1, 0, 2)}, runtime.ErrBatchRows, "the batch takes 1 to 2"},
		{"too many tokens", []runtime.BatchRow{row(3, 0, 0), row(2, 0, 1)}, runtime.ErrBatchRows, "a step of 5 tokens"},
		{"empty row", []runtime.BatchRow{row(0, 0, 0)}, runtime.ErrBatchRows, "has no tokens"},
		{"table too short", []runtime.BatchRow{row(2, 3, 0)}, runtime.ErrBatchRows, "its 1 blocks hold 4"},
		{"negative position", []runtime.BatchRow{row(1, -1, 0)}, runtime.ErrBatchRows, "at position -1"},
		{"block past the pool", []runtime.BatchRow{row(1, 4, 0, 8)}, runtime.ErrBatchRows, "names block 8"},
		{"negative block", []runtime.BatchRow{row(1, 0, -1)}, runtime.ErrBatchRows, "names block -1"},
		{"past the context", []runtime.BatchRow{row(1, 20, 0, 1, 2, 3, 4, 5)}, runtime.ErrContextFull, "pass the context of 20"},
	} {
		b := make([]byte, batchStateBytes(&st, l.rows, l.stride))
		_, _, err := writeBatchState(b, &st, &l, c.rows, 0)
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v, want %v saying %q", c.name, err, c.want, c.msg)
		}
	}
	b := make([]byte, batchStateBytes(&st, l.rows, l.stride))
	_, _, err := writeBatchState(b, &st, &l, []runtime.BatchRow{{Tokens: []int32{100}, Blocks: []int32{0}}}, 0)
	if err == nil || !strings.Contains(err.Error(), "token id 100 is outside the vocabulary of 100") {
		t.Errorf("a token past the vocabulary: %v", err)
	}
}

// A decode-only step runs as its bucket's graph: rows padded to the next
// power of two (at most the batch's rows) with one-token rows at position
// 0 of the reserved block, past the sequences' blocks.
func TestBatchDecodeBuckets(t *testing.T) {
	for _, c := range []struct{ n, rows, want int }{{1, 16, 1}, {2, 16, 2}, {3, 16, 4}, {5, 16, 8}, {9, 16, 16}, {16, 16, 16}, {9, 12, 12}, {33, 64, 64}} {
		if got := decodeBucket(c.n, c.rows); got != c.want {
			t.Errorf("%d rows of a batch of %d: bucket %d, want %d", c.n, c.rows, got, c.want)
		}
	}
	st := testBatchState
	l := batchLimits{rows: 4, tokens: 8, blockTokens: 4, stride: 5, blocks: 8, ctx: 20, vocab: 100}
	b := make([]byte, batchStateBytes(&st, l.rows, l.stride))
	rows := []runtime.BatchRow{{Tokens: []int32{7}, Pos: 9, Blocks: []int32{3, 1, 6}}}
	tokens, n, err := writeBatchState(b, &st, &l, rows, decodeBucket(len(rows)+2, l.rows)-len(rows))
	if err != nil {
		t.Fatal(err)
	}
	if tokens != 4 || n != st.Tables+4*5*4 {
		t.Fatalf("%d tokens, %d bytes; want 4, %d", tokens, n, st.Tables+4*5*4)
	}
	ints := func(off int64, k int) []int32 { return le32s(b[off:], k) }
	for _, f := range []struct {
		name      string
		got, want []int32
	}{
		{"t", ints(st.T, 1), []int32{4}},
		{"tokens", ints(st.Tokens, 4), []int32{7, 0, 0, 0}},
		{"positions", ints(st.Positions, 4), []int32{9, 0, 0, 0}},
		{"row_of", ints(st.RowOf, 4), []int32{0, 1, 2, 3}},
		{"last_tokens", ints(st.LastTokens, 4), []int32{0, 1, 2, 3}},
		{"rows header", ints(st.Rows, 1), []int32{4}},
		{"padding tables' first blocks", []int32{ints(st.Tables+20, 1)[0], ints(st.Tables+40, 1)[0], ints(st.Tables+60, 1)[0]}, []int32{8, 8, 8}},
	} {
		if !slices.Equal(f.got, f.want) {
			t.Errorf("%s: %v, want %v", f.name, f.got, f.want)
		}
	}
	if _, _, err := writeBatchState(b, &st, &l, rows, 4); err == nil {
		t.Error("padding past the batch's rows passed")
	}
}

// checkBatch refuses a batched step whose fields or logits lie outside
// their regions, and passes a plan without one.
func TestCheckBatch(t *testing.T) {
	l := plans.Launch{Kernel: "k", GridA: [3]int64{1, 0, 0}, GridB: [3]int64{0, 1, 1}, Block: [3]int{128, 1, 1}}
	m := &plans.Manifest{Model: plans.Model{Vocab: 10}, Memory: plans.Memory{MaxTokens: 8}}
	good := func() *plans.Kernels {
		return &plans.Kernels{Batch: []plans.Launch{l}, BatchRows: []plans.Launch{l}, BatchMaxRows: 4, BatchBytes: 4 * 4 * 10, State: testBatchState}
	}
	if err := checkBatch(good(), m); err != nil {
		t.Fatal(err)
	}
	if err := checkBatch(&plans.Kernels{}, m); err != nil {
		t.Fatalf("a plan without a batched step: %v", err)
	}
	withDecode := good()
	withDecode.BatchDecode, withDecode.BatchDecodeMaxRows = []plans.Launch{l}, 4
	if err := checkBatch(withDecode, m); err != nil {
		t.Fatalf("a batched decode step: %v", err)
	}
	for name, spoil := range map[string]func(k *plans.Kernels){
		"rows past max_tokens":       func(k *plans.Kernels) { k.BatchMaxRows = 9 },
		"no per-row launches":        func(k *plans.Kernels) { k.BatchRows = nil },
		"row_of in the single block": func(k *plans.Kernels) { k.State.RowOf = 200 },
		"picks over the tables":      func(k *plans.Kernels) { k.State.Picks = 350 },
		"logits past the region":     func(k *plans.Kernels) { k.BatchLogits = 4 },
		"decode rows past the batch's": func(k *plans.Kernels) {
			k.BatchDecode, k.BatchDecodeMaxRows = []plans.Launch{l}, 5
		},
		"decode launches without rows":           func(k *plans.Kernels) { k.BatchDecode = []plans.Launch{l} },
		"decode rows without launches":           func(k *plans.Kernels) { k.BatchDecodeMaxRows = 2 },
		"few-token launches without decode rows": func(k *plans.Kernels) { k.BatchFew = []plans.Launch{l} },
		"a few-token grid of no blocks at its tokens": func(k *plans.Kernels) {
			k.BatchDecode, k.BatchDecodeMaxRows = []plans.Launch{l}, 2
			k.BatchFew = []plans.Launch{{Kernel: "k", GridA: [3]int64{1, 0, 0}, GridB: [3]int64{-2, 1, 1}, Block: [3]int{1, 1, 1}}}
		},
		"a decode grid of no blocks at its rows": func(k *plans.Kernels) {
			k.BatchDecode, k.BatchDecodeMaxRows = []plans.Launch{{Kernel: "k", GridA: [3]int64{1, 0, 0}, GridB: [3]int64{-2, 1, 1}, Block: [3]int{1, 1, 1}}}, 2
		},
		"an unknown argument kind": func(k *plans.Kernels) {
			k.Batch = []plans.Launch{{Kernel: "k", GridB: [3]int64{1, 1, 1}, Block: [3]int{1, 1, 1}, Args: []plans.Arg{{Kind: "pool"}}}}
		},
		"a grid of no blocks at rows": func(k *plans.Kernels) {
			k.BatchRows = []plans.Launch{{Kernel: "k", GridA: [3]int64{1, 0, 0}, GridB: [3]int64{-1, 1, 1}, Block: [3]int{1, 1, 1}}}
		},
	} {
		k := good()
		spoil(k)
		if err := checkBatch(k, m); err == nil {
			t.Errorf("%s: passed", name)
		}
	}
}

// The pool's and the batch region's arguments resolve inside their
// regions; outside a batched step (0 bytes) they are refused.
func TestBatchArgs(t *testing.T) {
	r := &regions{pool: 1 << 20, poolBytes: 4096, batch: 1 << 30, batchBytes: 512}
	if v, err := argValue(&plans.Arg{Kind: plans.ArgKVPool}, r); err != nil || v != 1<<20 {
		t.Errorf("kvpool: %#x %v", v, err)
	}
	if v, err := argValue(&plans.Arg{Kind: plans.ArgBatch, Offset: 256}, r); err != nil || v != 1<<30+256 {
		t.Errorf("batch: %#x %v", v, err)
	}
	for _, a := range []plans.Arg{{Kind: plans.ArgKVPool, Offset: 8}, {Kind: plans.ArgBatch, Offset: 512}} {
		if _, err := argValue(&a, r); err == nil {
			t.Errorf("%+v resolved", a)
		}
	}
	if _, err := argValue(&plans.Arg{Kind: plans.ArgKVPool}, &regions{}); err == nil {
		t.Error("the pool resolved outside a batched step")
	}
}

// A step of decode tokens alone (tokens == rows) within the batched decode
// step's rows takes BatchDecode; another step of at most as many tokens
// BatchFew where the plan has one; a step of more tokens, or a plan
// without them, takes Batch.
func TestTokenSchedule(t *testing.T) {
	batch := []plans.Launch{{Kernel: "gemm"}}
	decode := []plans.Launch{{Kernel: "q8"}, {Kernel: "q8"}}
	few := []plans.Launch{{Kernel: "q8"}, {Kernel: "q8"}, {Kernel: "q8"}}
	k := &plans.Kernels{Batch: batch, BatchDecode: decode, BatchFew: few, BatchDecodeMaxRows: 16, BatchMaxRows: 64}
	lens := map[string]int{"batch": len(batch), "batch decode": len(decode), "batch few": len(few)}
	cases := []struct {
		tokens, rows int64
		want         string
	}{{1, 1, "batch decode"}, {4, 4, "batch decode"}, {16, 16, "batch decode"}, {17, 17, "batch"}, {64, 64, "batch"},
		{5, 4, "batch few"}, {16, 1, "batch few"}, {17, 3, "batch"}, {512, 1, "batch"}}
	for _, tc := range cases {
		s, sched := tokenSchedule(k, tc.tokens, tc.rows)
		if name := tokenScheduleNames[s]; name != tc.want || len(sched) != lens[name] {
			t.Errorf("%d tokens over %d rows: %s (%d launches), want %s", tc.tokens, tc.rows, tokenScheduleNames[s], len(sched), tc.want)
		}
	}
	k.BatchFew = nil
	if s, _ := tokenSchedule(k, 5, 4); tokenScheduleNames[s] != "batch" {
		t.Errorf("a plan without a few-token step: %s", tokenScheduleNames[s])
	}
	k.BatchDecode, k.BatchDecodeMaxRows = nil, 0
	if s, sched := tokenSchedule(k, 4, 4); tokenScheduleNames[s] != "batch" || len(sched) != 1 {
		t.Errorf("a plan without a batched decode step: %s", tokenScheduleNames[s])
	}
}

// Every schedule's kernels are looked up when the plan loads, the batched
// decode step's included, each with its largest launch's shared memory.
func TestKernelSmem(t *testing.T) {
	k := &plans.Kernels{
		Prefill: []plans.Launch{{Kernel: "p", Smem: 1}}, Decode: []plans.Launch{{Kernel: "d"}},
		Batch: []plans.Launch{{Kernel: "b"}}, BatchRows: []plans.Launch{{Kernel: "r"}},
		BatchDecode: []plans.Launch{{Kernel: "q8"}, {Kernel: "p", Smem: 4096}},
		BatchFew:    []plans.Launch{{Kernel: "f", Smem: 8}},
	}
	want := map[string]int{"p": 4096, "d": 0, "b": 0, "r": 0, "q8": 0, "f": 8}
	if got := kernelSmem(k); !reflect.DeepEqual(got, want) {
		t.Errorf("kernels looked up: %v, want %v", got, want)
	}
}

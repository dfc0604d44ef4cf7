package cuda_test

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/llama-orch/orc/codegen/cuda"
	"github.com/llama-orch/orc/plans"
)

// field is one part of a quant block: bytes [from, from+size).
type field struct{ from, size int }

// The GPU layouts as the kernels read them (templates/weights.cu.tmpl):
// every block's quants, then each scale field as its own array.
type gpuLayout struct {
	dtype  string
	block  int
	fields []field // in section order
}

var gpuLayouts = []gpuLayout{
	{"q4_0", 18, []field{{2, 16}, {0, 2}}},
	{"q5_0", 22, []field{{6, 16}, {2, 4}, {0, 2}}},
	{"q8_0", 34, []field{{2, 32}, {0, 2}}},
	{"mxfp4", 17, []field{{1, 16}, {0, 1}}},
	{"q6_k", 210, []field{{0, 192}, {192, 16}, {208, 2}}},
}

func TestRelayoutSplit(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, l := range gpuLayouts {
		const nblk = 7
		src := make([]byte, nblk*l.block)
		for i := range src {
			src[i] = byte(r.Uint32())
		}
		// [nblk, one block of elements]: each row is one block.
		w := plans.Tensor{Name: "w", DType: l.dtype, Layout: "gpu_" + l.dtype, Shape: []int64{nblk, 32}, Bytes: int64(len(src))}
		got, err := cuda.Relayout(&w, src)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(src) {
			t.Fatalf("%s: %d bytes became %d", l.dtype, len(src), len(got))
		}
		sec := 0 // start of the current section
		for _, f := range l.fields {
			if sec%2 != 0 {
				t.Errorf("%s: section at %d is not 2-byte aligned", l.dtype, sec)
			}
			for b := range nblk {
				want := src[b*l.block+f.from : b*l.block+f.from+f.size]
				if have := got[sec+b*f.size : sec+(b+1)*f.size]; !bytes.Equal(have, want) {
					t.Fatalf("%s: block %d field at %d: got % x, want % x", l.dtype, b, f.from, have, want)
				}
			}
			sec += nblk * f.size
		}
	}
}

// gpu_q5_k (relayout.go, splitQ5K; templates/weights.cu.tmpl,
// W_q5_k_split): block b of nblk has its qs at 128b, the fifth bits of its
// group c at 128·nblk + 32b + 8c (two little-endian words, of elements
// 64c..64c+31 and 64c+32..64c+63; element 4i+k of a word at bit 8k+i) and
// its d, dmin and scales at 160·nblk + 16b. Each element's fifth bit and
// each block's qs and header read there must be the GGUF block's.
func TestRelayoutQ5K(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const nblk, bb = 5, 176
	src := make([]byte, nblk*bb)
	for i := range src {
		src[i] = byte(r.Uint32())
	}
	w := plans.Tensor{Name: "w", DType: "q5_k", Layout: "gpu_q5_k", Shape: []int64{nblk, 256}, Bytes: int64(len(src))}
	got, err := cuda.Relayout(&w, src)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(src) {
		t.Fatalf("%d bytes became %d", len(src), len(got))
	}
	for b := range nblk {
		blk := src[b*bb : (b+1)*bb]
		if have, want := got[160*nblk+16*b:160*nblk+16*(b+1)], blk[:16]; !bytes.Equal(have, want) {
			t.Errorf("block %d header: got % x, want % x", b, have, want)
		}
		if have, want := got[128*b:128*(b+1)], blk[48:]; !bytes.Equal(have, want) {
			t.Errorf("block %d qs: got % x, want % x", b, have, want)
		}
		for e := range 256 {
			c, l := e/64, e%64
			// GGUF: bit 2c of qh[l] for the group's first 32 elements, bit 2c+1 of qh[l-32] after.
			want := blk[16+l%32] >> (2*c + l/32) & 1
			word := binary.LittleEndian.Uint32(got[128*nblk+32*b+8*c+4*(l/32):])
			if have := word >> (8*(l%4) + l%32/4) & 1; uint32(want) != have {
				t.Fatalf("block %d element %d: fifth bit %d, want %d", b, e, have, want)
			}
		}
	}
}

// GGUF order is the GPU layout of the aligned types, and "" is GGUF order.
func TestRelayoutIdentity(t *testing.T) {
	src := []byte(strings.Repeat("0123456789abcdef", 9)) // one Q4_K block
	for _, tc := range []plans.Tensor{{DType: "q4_k", Layout: "gpu_q4_k"}, {DType: "q4_0", Layout: ""}, {DType: "f16", Layout: ""}} {
		got, err := cuda.Relayout(&tc, src)
		if err != nil || !bytes.Equal(got, src) {
			t.Errorf("%s %q: changed the bytes (err %v)", tc.DType, tc.Layout, err)
		}
	}
}

func TestRelayoutRefuses(t *testing.T) {
	for _, tc := range []struct {
		t    plans.Tensor
		n    int
		want string
	}{
		{plans.Tensor{Name: "a", DType: "q4_0", Layout: "gpu_q8_0"}, 18, "is not"},
		{plans.Tensor{Name: "b", DType: "q4_0", Layout: "gpu_q4_0", Shape: []int64{1, 32}, Bytes: 20}, 20, "whole q4_0 blocks"},
		{plans.Tensor{Name: "d", DType: "q4_0", Layout: "gpu_q4_0", Shape: []int64{2, 32}, Bytes: 36, Segments: []int64{1}}, 36, "cover 1 of 2 rows"},
		{plans.Tensor{Name: "c", DType: "q9_9", Layout: "gpu_q9_9"}, 18, "unknown dtype"},
	} {
		_, err := cuda.Relayout(&tc.t, make([]byte, tc.n))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.t.Name, err, tc.want)
		}
	}
}

// A tensor in segments (fuseQKV's row ranges of a packed attn_qkv) is laid
// out segment by segment: each segment's span of the result is exactly the
// segment relaid as a tensor of its own, which is how its kernel reads it.
func TestRelayoutSegments(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, l := range append(gpuLayouts, gpuLayout{dtype: "q5_k", block: 176}) { // q5_k: no section split (TestRelayoutQ5K)
		const rows, rowBlocks = 6, 2
		src := make([]byte, rows*rowBlocks*l.block)
		for i := range src {
			src[i] = byte(r.Uint32())
		}
		rowBytes := rowBlocks * l.block
		w := plans.Tensor{Name: "qkv", DType: l.dtype, Layout: "gpu_" + l.dtype, Shape: []int64{rows, rowBlocks * 32},
			Bytes: int64(len(src)), Segments: []int64{3, 1, 2}}
		got, err := cuda.Relayout(&w, src)
		if err != nil {
			t.Fatal(err)
		}
		first := 0
		for _, n := range w.Segments {
			seg := src[first*rowBytes : (first+int(n))*rowBytes]
			alone := plans.Tensor{Name: "part", DType: l.dtype, Layout: w.Layout, Shape: []int64{n, rowBlocks * 32}, Bytes: int64(len(seg))}
			want, err := cuda.Relayout(&alone, seg)
			if err != nil {
				t.Fatal(err)
			}
			if have := got[first*rowBytes : (first+int(n))*rowBytes]; !bytes.Equal(have, want) {
				t.Errorf("%s: rows [%d, %d) are not the segment laid out alone", l.dtype, first, first+int(n))
			}
			if bytes.Equal(want, seg) {
				t.Errorf("%s: the split layout left the segment in GGUF order", l.dtype)
			}
			first += int(n)
		}
	}
}

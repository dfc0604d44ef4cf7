package ir

import (
	"strings"
	"testing"
)

// TestVerifyKernelChoice: the kernel choices a GPU pipeline records
// (chooseKernels) are checked: both schedules' families, each one its op
// may take, a tensor-core kernel's shape, and fold_norm, writes_sum,
// stages_x, pick_early, starts_late, quantize_at_end, launch_at_end,
// residual_before_wait, mmat_slab and mmat_stage_x only where they can
// hold. Each case edits the
// swiglu_linear %25 of a fixture (over the normed row %23 of add_rmsnorm
// %22) or its linear.
func TestVerifyKernelChoice(t *testing.T) {
	const swiglu = `%25 = swiglu_linear(%23, %24) f32[T,48]`
	mma := swiglu + ` {fold_norm=true kernel="mma" mma_upw=1 mma_warps=1 prefill_kernel="gemm" stream_blocks=264 stream_smem=1024}`
	text := readFixture(t, "fused.ir")
	for _, ok := range []string{
		swiglu + ` {kernel="q8" prefill_kernel="gemm"}`,
		swiglu + ` {kernel="gemv" prefill_kernel="gemv"}`,
		swiglu + ` {batch_kernel="gemm" kernel="q8" prefill_kernel="q8"}`,
		swiglu + ` {batch_decode_kernel="q8" kernel="q8" prefill_kernel="gemm"}`,
		swiglu + ` {batch_decode_kernel="mma_tokens" kernel="q8" mmat_slab=512 mmat_stage_x=true prefill_kernel="gemm"}`,
		swiglu + ` {batch_decode_kernel="mma_halves" kernel="q8" mmah_cluster=3 mmah_clusters=44 mmah_warps=8 mmah_x_halves=1 prefill_kernel="gemm"}`,
		mma,
	} {
		g, err := Parse(strings.Replace(text, swiglu, ok, 1))
		if err == nil {
			err = Verify(g)
		}
		if err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, c := range []struct{ name, new, want string }{
		{"decode only", swiglu + ` {kernel="q8"}`, `a swiglu_linear takes both or neither`},
		{"gemm in decode", swiglu + ` {kernel="gemm" prefill_kernel="gemm"}`, `kernel "gemm": a swiglu_linear takes one of [gemv q8 mma]`},
		{"unknown family", swiglu + ` {kernel="q8" prefill_kernel="wmma"}`, `prefill_kernel "wmma"`},
		{"a batch kernel no prefill takes", swiglu + ` {batch_kernel="wmma" kernel="q8" prefill_kernel="gemm"}`, `batch_kernel "wmma": a swiglu_linear over a batched step's rows takes one of [gemm gemv q8 mma mma_tokens mma_halves]`},
		{"a batch decode kernel no prefill takes", swiglu + ` {batch_decode_kernel="wmma" kernel="q8" prefill_kernel="gemm"}`, `batch_decode_kernel "wmma": a swiglu_linear over a batched decode step's tokens takes one of [gemm gemv q8 mma mma_tokens mma_halves]`},
		{"mma_tokens in decode", swiglu + ` {kernel="mma_tokens" prefill_kernel="gemm"}`, `kernel "mma_tokens": a swiglu_linear takes one of [gemv q8 mma]`},
		{"a batch decode kernel of an int", swiglu + ` {batch_decode_kernel=1 kernel="q8" prefill_kernel="gemm"}`, `attr batch_decode_kernel has type int64, want string`},
		{"family of a string", swiglu + ` {kernel=1 prefill_kernel="gemm"}`, `attr kernel has type int64, want string`},
		{"mma without its shape", swiglu + ` {kernel="mma" prefill_kernel="gemm"}`, `attr mma_warps = <nil>`},
		{"a shape without mma", swiglu + ` {kernel="q8" mma_warps=2 prefill_kernel="gemm"}`, `attr mma_warps = 2 with kernels q8, gemm`},
		{"an empty stream", strings.Replace(mma, "stream_smem=1024", "stream_smem=0", 1), `attr stream_smem = 0`},
		{"fold_norm on q8", swiglu + ` {fold_norm=true kernel="q8" prefill_kernel="gemm"}`, `fold_norm on a q8 kernel`},
		{"fold_norm over no norm", strings.Replace(mma, "(%23, %24)", "(%19, %24)", 1), `over attention`},
		{"writes_sum on a swiglu", swiglu + ` {kernel="q8" prefill_kernel="gemm" writes_sum=true}`, `writes_sum on a q8 swiglu_linear`},
		{"a choice attr alone", swiglu + ` {writes_sum=true}`, `attr writes_sum without a kernel`},
		{"router logits of a swiglu", swiglu + ` {kernel="q8" prefill_kernel="gemm" router_logits=true}`, `router_logits on a swiglu_linear, which cannot take it`},
		{"batched decode codes of a swiglu", swiglu + ` {batch_decode_writes_codes=true kernel="q8" prefill_kernel="gemm"}`, `batch_decode_writes_codes on a swiglu_linear, which cannot take it`},
		{"a row in place of a swiglu", swiglu + ` {kernel="q8" prefill_kernel="gemm" row_in_place=true}`, `row_in_place on a swiglu_linear`},
		{"a swiglu staging its input", swiglu + ` {kernel="q8" prefill_kernel="gemm" stages_x=true}`, `stages_x on a q8 swiglu_linear: a q8 linear stages its input`},
		{"staging under a gemm", swiglu + ` {kernel="q8" prefill_kernel="gemm" prefill_stages_x=true}`, `prefill_stages_x on a gemm swiglu_linear`},
		{"staging alone", swiglu + ` {stages_x=true}`, `attr stages_x without a kernel`},
		{"a q8 swiglu starting late", swiglu + ` {kernel="q8" prefill_kernel="gemm" starts_late=true}`, `starts_late on a q8 swiglu_linear`},
		{"a swiglu picking experts", swiglu + ` {kernel="q8" pick_early=true prefill_kernel="gemm"}`, `pick_early on a q8 swiglu_linear: a decode q8 MoE picks its experts early`},
		{"a residual read early without a sum", swiglu + ` {kernel="q8" prefill_kernel="gemm" residual_before_wait=true}`, `residual_before_wait on a q8 swiglu_linear`},
		{"a quantize at its end, no late start", swiglu + ` {kernel="q8" prefill_kernel="gemm" quantize_at_end=true}`, `quantize_at_end on a q8 swiglu_linear`},
		{"a stream of no mma_tokens kernel", swiglu + ` {batch_decode_kernel="q8" kernel="q8" mmat_slab=512 prefill_kernel="gemm"}`, `mmat_slab = 512 on a swiglu_linear whose kernels are gemm, , q8`},
		{"a cluster shape of no mma_halves kernel", swiglu + ` {batch_decode_kernel="mma_tokens" kernel="q8" mmah_cluster=3 mmah_clusters=44 mmah_warps=8 prefill_kernel="gemm"}`, `attr mmah_cluster = 3 on a swiglu_linear whose kernels are gemm, , mma_tokens`},
		{"an mma_halves kernel without its shape", swiglu + ` {batch_decode_kernel="mma_halves" kernel="q8" mmah_cluster=3 mmah_warps=8 mmah_x_halves=1 prefill_kernel="gemm"}`, `attr mmah_clusters = <nil>`},
		{"an mma_halves kernel without its activations' halves", swiglu + ` {batch_decode_kernel="mma_halves" kernel="q8" mmah_cluster=3 mmah_clusters=44 mmah_warps=8 prefill_kernel="gemm"}`, `attr mmah_x_halves = <nil>`},
		{"activations in three halves", swiglu + ` {batch_decode_kernel="mma_halves" kernel="q8" mmah_cluster=3 mmah_clusters=44 mmah_warps=8 mmah_x_halves=3 prefill_kernel="gemm"}`, `attr mmah_x_halves = 3`},
		{"an empty cluster", swiglu + ` {batch_decode_kernel="mma_halves" kernel="q8" mmah_cluster=0 mmah_clusters=44 mmah_warps=8 mmah_x_halves=1 prefill_kernel="gemm"}`, `attr mmah_cluster = 0`},
		{"an empty slab", swiglu + ` {batch_decode_kernel="mma_tokens" kernel="q8" mmat_slab=0 prefill_kernel="gemm"}`, `mmat_slab = 0`},
		{"staged activations without a stream", swiglu + ` {batch_decode_kernel="mma_tokens" kernel="q8" mmat_stage_x=true prefill_kernel="gemm"}`, `mmat_stage_x on a swiglu_linear that does not stream`},
		{"a late start after no launch at its end", strings.Replace(mma, "}", " starts_late=true}", 1), `%25 swiglu_linear starts late, but no node before it records launch_at_end`},
	} {
		old := swiglu
		if !strings.Contains(text, old) {
			t.Fatalf("fixture lacks %q", old)
		}
		g, err := Parse(strings.Replace(text, old, c.new, 1))
		if err == nil {
			err = Verify(g)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.name, err, c.want)
		}
	}
	// A launch at its end pairs with the late start after it, over nodes
	// that may launch nothing.
	const norm, embed = `%22 = add_rmsnorm(%20, %19, %21) f32[T,128] {eps=1e-05 parts=[64,64]}`, `%3 = embed(%2, %0) f32[T,64]`
	late := strings.Replace(strings.Replace(text, swiglu, strings.Replace(mma, "}", " starts_late=true}", 1), 1),
		norm, strings.Replace(norm, "}", " launch_at_end=true}", 1), 1)
	for _, c := range []struct{ name, text, want string }{
		{"paired", late, ""},
		{"a launch at its end before an add_layernorm", strings.Replace(late, embed, embed+` {launch_at_end=true}`, 1),
			`%3 embed records launch_at_end, but %6 add_layernorm, which launches after it, does not start late`},
	} {
		g, err := Parse(c.text)
		if err == nil {
			err = Verify(g)
		}
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
	const add = `%28 = add(%25, %27) f32[T,48]`
	g, err := Parse(strings.Replace(text, add, add+` {kernel="q8" prefill_kernel="gemm"}`, 1))
	if err == nil {
		err = Verify(g)
	}
	if err == nil || !strings.Contains(err.Error(), "%28 add: kernel \"q8\", prefill_kernel \"gemm\" on an op that takes no kernel choice") {
		t.Errorf("a kernel on an add: got %v", err)
	}
}

// TestVerifyLinearSlabs: a decode mma linear (linear_mmas) records its
// K-slab and stages, whole slabs of a super-block a warp's, at least two
// stages filling its shared memory; no other node records them. Each case
// edits the down %27 (rows of 512: two super-blocks) of a fixture.
func TestVerifyLinearSlabs(t *testing.T) {
	const down = `%27 = linear(%26, %23) f32[T,256]`
	const shape = ` mma_upw=1 mma_warps=2 prefill_kernel="gemm" stream_blocks=16 stream_smem=26880`
	text := readFixture(t, "dense.ir")
	if !strings.Contains(text, down) {
		t.Fatalf("fixture lacks %q", down)
	}
	for _, c := range []struct{ name, attrs, want string }{
		{"a slab of two super-blocks in 2 stages", `{kernel="mma" mma_slab=512 mma_stages=2` + shape + `}`, ""},
		{"no slab", `{kernel="mma" mma_stages=2` + shape + `}`, `mma_slab = <nil>, mma_stages = 2 on a mma linear: a decode mma linear records both`},
		{"a slab on a q8 linear", `{kernel="q8" mma_slab=512 mma_stages=2 prefill_kernel="gemm"}`, `a decode mma linear records both`},
		{"a slab that is not the warps' super-blocks", `{kernel="mma" mma_slab=256 mma_stages=2` + shape + `}`, `mma_slab = 256 with 2 warps of 1 super-blocks over rows of 512`},
		{"one stage", `{kernel="mma" mma_slab=512 mma_stages=1` + shape + `}`, `mma_stages = 1 with stream_smem 26880: at least two whole stages`},
		{"stages not dividing the stream", `{kernel="mma" mma_slab=512 mma_stages=11` + shape + `}`, `mma_stages = 11 with stream_smem 26880`},
		{"a sum written by an mma linear", `{kernel="mma" mma_slab=512 mma_stages=2` + shape + ` writes_sum=true}`, ""},
	} {
		g, err := Parse(strings.Replace(text, down, down+" "+c.attrs, 1))
		if err == nil {
			err = Verify(g)
		}
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
}

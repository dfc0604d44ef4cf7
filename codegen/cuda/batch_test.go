package cuda_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/llama-orch/orc/codegen/cuda"
	"github.com/llama-orch/orc/compiler/synth"
	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/passes"
	"github.com/llama-orch/orc/plans"
)

// TestBatchSchedule: every tiny preset's plan has a batched step whose
// attentions store and read the paged pool (never a sequence's cache),
// whose per-row part gathers the rows' last tokens first, reads the rows
// header as its state and leaves the greedy picks last, and whose state
// fields lie past the single-sequence block, in order, the logits inside
// the batch region.
func TestBatchSchedule(t *testing.T) {
	for _, tp := range tinyPresets {
		out, man := tinyOutput(t, tp.preset, tp.quant)
		k, name := out.Kernels, tp.preset+"-"+string(tp.quant)
		if len(k.Batch) == 0 || len(k.BatchRows) < 3 {
			t.Fatalf("%s: batched step of %d and %d launches", name, len(k.Batch), len(k.BatchRows))
		}
		checkPagedTokens(t, name, "batched step", k.Batch, man.Model.NLayer)
		for _, l := range k.BatchRows {
			for _, a := range l.Args {
				if a.Kind == plans.ArgBatch && a.Offset == 0 {
					t.Errorf("%s: per-row launch %s overwrites the paged attention's partials at the batch region's start", name, l.Kernel)
				}
			}
		}
		first, last := k.BatchRows[0], k.BatchRows[len(k.BatchRows)-1]
		if !strings.HasPrefix(first.Kernel, "gather_rows") || !strings.HasPrefix(last.Kernel, "batch_argmax") {
			t.Errorf("%s: the per-row part runs %s … %s", name, first.Kernel, last.Kernel)
		}
		if a := last.Args[0]; a.Kind != plans.ArgBatch || a.Offset != k.BatchLogits || k.BatchLogits+4*int64(k.BatchMaxRows*man.Model.Vocab) > k.BatchBytes {
			t.Errorf("%s: argmax reads %+v; logits at %d of a %d-byte region", name, a, k.BatchLogits, k.BatchBytes)
		}
		for _, l := range k.BatchRows {
			if s := l.Args[len(l.Args)-1]; s.Kind != plans.ArgState || s.Offset != k.State.Rows {
				t.Errorf("%s: per-row launch %s has state %+v, want the rows header at %d", name, l.Kernel, s, k.State.Rows)
			}
		}
		st := k.State
		offs := []int64{st.Bytes, st.Rows, st.Paging, st.RowOf, st.LastTokens, st.Picks, st.Tables}
		for i := 1; i < len(offs); i++ {
			if offs[i] < offs[i-1] || offs[i]%4 != 0 {
				t.Errorf("%s: state fields out of order: bytes, rows, paging, row_of, last_tokens, picks, tables at %v", name, offs)
			}
		}
		if st.LastTokens-st.RowOf != 4*int64(man.Memory.MaxTokens) || k.BatchMaxRows < 1 || k.BatchMaxRows > man.Memory.MaxTokens {
			t.Errorf("%s: row_of of %d bytes at max_tokens %d, %d rows", name, st.LastTokens-st.RowOf, man.Memory.MaxTokens, k.BatchMaxRows)
		}
	}
}

// The per-row part's matrix kernels are chooseKernels' batch_kernel: the
// head's, mma_halves (Q6_K laid out), is linear_mmah over the gathered
// rows, with no quantize launch; mma_tokens, linear_mmat after one; a
// gemv record gives a gemv head, and a graph without the record is
// refused.
func TestBatchRowsKernelIsRecorded(t *testing.T) {
	g, man, _ := tinyPlan(t, "llama-tiny", synth.QuantQ4KM)
	head := g.Outputs[0]
	if head.Str("batch_kernel") != ir.KernelMMAHalves {
		t.Fatalf("the head's batch_kernel is %q", head.Str("batch_kernel"))
	}
	if rows := generate(t, g, man, "").Kernels.BatchRows; !strings.HasPrefix(rows[1].Kernel, "linear_mmah") {
		t.Errorf("the per-row launches are %s, %s, %s", rows[0].Kernel, rows[1].Kernel, rows[2].Kernel)
	}
	for _, k := range []string{"mmah_cluster", "mmah_warps", "mmah_clusters"} {
		delete(head.Attrs, k)
	}
	head.Attrs["batch_kernel"] = ir.KernelMMATokens
	if rows := generate(t, g, man, "").Kernels.BatchRows; !strings.HasPrefix(rows[1].Kernel, "quantize_x8") || !strings.HasPrefix(rows[2].Kernel, "linear_mmat") {
		t.Errorf("an mma_tokens batch_kernel gives the per-row launches %s, %s, %s", rows[0].Kernel, rows[1].Kernel, rows[2].Kernel)
	}
	head.Attrs["batch_kernel"] = ir.KernelGEMV
	out := generate(t, g, man, "")
	if rows := out.Kernels.BatchRows; !strings.HasPrefix(rows[1].Kernel, "linear_gemv") {
		t.Errorf("a gemv batch_kernel gives the per-row launches %s, %s", rows[1].Kernel, rows[2].Kernel)
	}
	delete(head.Attrs, "batch_kernel")
	if _, err := cuda.Generate(g, man, cuda.Options{}); err == nil || !strings.Contains(err.Error(), "has no batch_kernel: run the chooseKernels pass") {
		t.Errorf("a head without batch_kernel: %v", err)
	}
}

// checkPagedTokens checks a batched step's per-token launches ls: each
// attention stores and reads the paged pool (never a sequence's cache),
// one store and attention a layer (the attention merges its splits
// itself), and only the attention's split partials, at the batch region's
// start, and its counters after them lie in the batch region.
func checkPagedTokens(t *testing.T, name, what string, ls []plans.Launch, layers int) {
	t.Helper()
	stores, attends := 0, 0
	for _, l := range ls {
		var batch []int64 // the launch's batch region offsets
		for _, a := range l.Args {
			if a.Kind == plans.ArgKV {
				t.Errorf("%s: the %s's per-token launch %s reads a sequence's cache", name, what, l.Kernel)
			}
			if a.Kind == plans.ArgBatch {
				batch = append(batch, a.Offset)
			}
		}
		switch {
		case strings.HasPrefix(l.Kernel, "kv_store_paged"):
			stores++
		case strings.HasPrefix(l.Kernel, "attend_paged"):
			attends++
			if len(batch) != 2 || batch[0] != 0 || batch[1] <= 0 {
				t.Errorf("%s: the %s's %s has its partials and counters at %v of the batch region, want 0 and past them", name, what, l.Kernel, batch)
			}
			continue
		case strings.HasPrefix(l.Kernel, "attend_") || strings.HasPrefix(l.Kernel, "kv_store"):
			t.Errorf("%s: the %s launches %s", name, what, l.Kernel)
		}
		if len(batch) > 0 {
			t.Errorf("%s: the %s's per-token launch %s has batch region arguments at %v", name, what, l.Kernel, batch)
		}
	}
	if stores != layers || attends != layers {
		t.Errorf("%s: the %s has %d paged stores and %d paged attentions for %d layers", name, what, stores, attends, layers)
	}
}

// TestBatchFewSchedule: a plan with a batched decode schedule has one for
// any other step of as many tokens: the decode schedule's launches, but
// its attentions those of the batched step (tiles of a row's tokens, the
// grid of the step's tiles), so that decode tokens beside short prefill
// chunks take the decode products; an f16 preset has neither.
func TestBatchFewSchedule(t *testing.T) {
	for _, tp := range tinyPresets {
		out, man := tinyOutput(t, tp.preset, tp.quant)
		k, name := out.Kernels, tp.preset+"-"+string(tp.quant)
		if len(k.BatchDecode) == 0 {
			if len(k.BatchFew) != 0 {
				t.Errorf("%s: a few-token step of %d launches without a decode step", name, len(k.BatchFew))
			}
			continue
		}
		if len(k.BatchFew) != len(k.BatchDecode) {
			t.Fatalf("%s: the few-token step has %d launches, the decode step %d", name, len(k.BatchFew), len(k.BatchDecode))
		}
		checkPagedTokens(t, name, "few-token step", k.BatchFew, man.Model.NLayer)
		var tiled []plans.Launch
		for _, l := range k.Batch {
			if strings.HasPrefix(l.Kernel, "attend_paged") {
				tiled = append(tiled, l)
			}
		}
		attends := 0
		for i, l := range k.BatchFew {
			want := k.BatchDecode[i]
			if strings.HasPrefix(l.Kernel, "attend_paged") {
				if l.Kernel == want.Kernel || l.GridA == want.GridA && l.GridB == want.GridB {
					t.Errorf("%s: launch %d is the decode step's attention %s, grid %v·T + %v", name, i, l.Kernel, l.GridA, l.GridB)
				}
				want, attends = tiled[attends], attends+1
			}
			if !reflect.DeepEqual(l, want) {
				t.Errorf("%s: the few-token step's launch %d is %s, want %s", name, i, l.Kernel, want.Kernel)
			}
		}
	}
}

// TestBatchDecodeSchedule: every tiny preset whose matrices take the
// integer path has a batched decode schedule for all the rows of its
// batched step (up to 64), whose
// attentions are the batched step's (paged) and whose matrix products are
// the tensor cores' over the step's tokens (mma_tokens, or mma_halves for
// K-quants with its fragments, in clusters with their activations in
// dynamic shared memory: two n-tiles of 8 a block, grid y = ceil(T/16))
// or, for weights without their fragments
// (MXFP4), the integer path's token tiles (grid y = ceil(T/8)), not the
// prefill's GEMMs, and whose MoE experts (gpt-oss's MXFP4, K-quants) run
// over their slots on the tensor cores (moe_gate_up_mmat, moe_down_mmat:
// grid (tiles, S)), not the prefill's expert GEMMs; an f16 preset, whose
// decode kernels would be its prefill's, has none.
func TestBatchDecodeSchedule(t *testing.T) {
	for _, tp := range tinyPresets {
		out, man := tinyOutput(t, tp.preset, tp.quant)
		k, name := out.Kernels, tp.preset+"-"+string(tp.quant)
		if tp.quant == "f16" {
			if len(k.BatchDecode) != 0 || k.BatchDecodeMaxRows != 0 {
				t.Errorf("%s: a batched decode step of %d launches for %d rows", name, len(k.BatchDecode), k.BatchDecodeMaxRows)
			}
			continue
		}
		if len(k.BatchDecode) == 0 || k.BatchDecodeMaxRows != min(64, k.BatchMaxRows) {
			t.Fatalf("%s: batched decode step of %d launches for %d rows (batched step: %d)", name, len(k.BatchDecode), k.BatchDecodeMaxRows, k.BatchMaxRows)
		}
		checkPagedTokens(t, name, "batched decode step", k.BatchDecode, man.Model.NLayer)
		matrix, mmat, moeMMAT, moes := 0, 0, 0, 0
		for _, l := range k.Batch {
			if strings.HasPrefix(l.Kernel, "moe_sum") {
				moes++
			}
		}
		for _, l := range k.BatchDecode {
			if strings.HasPrefix(l.Kernel, "moe_gate_up_mmat") || strings.HasPrefix(l.Kernel, "moe_down_mmat") {
				moeMMAT++
				if l.GridA != [3]int64{} || l.GridB[1] < 2 {
					t.Errorf("%s: %s's grid is %v·T + %v, want (tiles, several experts' blocks)", name, l.Kernel, l.GridA, l.GridB)
				}
			}
			for _, p := range []string{"gemm_linear", "gemm_qkv", "gemm_swiglu", "moe_gate_up_gemm", "moe_down_gemm"} {
				if strings.HasPrefix(l.Kernel, p) {
					t.Errorf("%s: the batched decode step launches %s", name, l.Kernel)
				}
			}
			for p, tile := range map[string]int64{"linear_q8": 8, "qkv_q8": 8, "swiglu_q8": 8, "linear_mmat": 16, "qkv_mmat": 16, "swiglu_mmat": 16,
				"linear_mmah": 16, "qkv_mmah": 16, "swiglu_mmah": 16} {
				if strings.HasPrefix(l.Kernel, p) {
					matrix++
					if tile == 16 {
						mmat++
					}
					if strings.Contains(p, "mmah") && l.Smem == 0 {
						t.Errorf("%s: %s has no dynamic shared memory for its activations", name, l.Kernel)
					}
					if l.GridA[1] != 1 || l.GridB[1] != 0 || l.GridDiv[1] != tile {
						t.Errorf("%s: %s's grid y is %d·T+%d over %d, want the token tiles ceil(T/%d)", name, l.Kernel, l.GridA[1], l.GridB[1], l.GridDiv[1], tile)
					}
				}
			}
		}
		if matrix < 2*man.Model.NLayer || mmat < man.Model.NLayer {
			t.Errorf("%s: %d matrix launches (%d on tensor cores) for %d layers", name, matrix, mmat, man.Model.NLayer)
		}
		if moeMMAT != 2*moes {
			t.Errorf("%s: %d expert launches on the tensor cores for %d MoE blocks", name, moeMMAT, moes)
		}
	}
}

// The batched decode schedule's matrix kernels are chooseKernels'
// batch_decode_kernel: a gemv record gives that node a gemv launch there
// (and leaves the batched step's own), and a graph without the record is
// refused.
func TestBatchDecodeKernelIsRecorded(t *testing.T) {
	g, man, _ := tinyPlan(t, "llama-tiny", synth.QuantQ4KM)
	var down *ir.Node
	for _, n := range g.Nodes {
		if k := n.Str("batch_decode_kernel"); n.Op == ir.OpLinear && (k == ir.KernelMMATokens || k == ir.KernelMMAHalves) {
			down = n
		}
	}
	if down == nil {
		t.Fatal("no tensor-core linear in the batched decode step")
	}
	count := func(ls []plans.Launch, prefix string) int {
		k := 0
		for _, l := range ls {
			if strings.HasPrefix(l.Kernel, prefix) {
				k++
			}
		}
		return k
	}
	before := generate(t, g, man, "")
	down.Attrs["batch_decode_kernel"] = ir.KernelGEMV
	for _, k := range []string{"mmah_cluster", "mmah_warps", "mmah_clusters"} {
		delete(down.Attrs, k)
	}
	after := generate(t, g, man, "")
	if d := count(after.Kernels.BatchDecode, "linear_gemv") - count(before.Kernels.BatchDecode, "linear_gemv"); d != 1 {
		t.Errorf("a gemv batch_decode_kernel adds %d linear_gemv launches to the batched decode step, want 1", d)
	}
	if count(after.Kernels.Batch, "linear_gemv") != count(before.Kernels.Batch, "linear_gemv") {
		t.Error("a batch_decode_kernel record changed the batched step's own launches")
	}
	delete(down.Attrs, "batch_decode_kernel")
	if _, err := cuda.Generate(g, man, cuda.Options{}); err == nil || !strings.Contains(err.Error(), "no kernel recorded for its batched decode step") {
		t.Errorf("a linear without batch_decode_kernel: %v", err)
	}
}

// TestBatchDecodeNormsWriteCodes: in Qwen2.5-0.5B's batched decode step
// (896-wide rows: mma_tokens) the norms before the qkv and the SwiGLU write
// the int16 codes their mma_tokens readers read, as chooseCodes recorded
// (batch_decode_writes_codes): a layer launches two quantize_x8 (the
// attention's output, the SwiGLU's), where without the records it
// launches four. Phi-3-mini's products (mma_halves) read the f32 rows
// themselves: no quantize_x8 and no records; turned to mma_tokens, each of
// the four quantizes its input.
func TestBatchDecodeNormsWriteCodes(t *testing.T) {
	quantizes := func(g *ir.Graph, man *plans.Manifest) int {
		n := 0
		for _, l := range generate(t, g, man, "").Kernels.BatchDecode {
			if strings.HasPrefix(l.Kernel, "quantize_x8_") {
				n++
			}
		}
		return n
	}
	g, man, _ := lowerGPU(t, writeShapes(t, "qwen2.5-0.5b", 1, synth.QuantQ4KM), fullWidthMaxTokens)
	if got := quantizes(g, man); got != 2 {
		t.Errorf("qwen2.5-0.5b: %d quantize_x8 launches in the batched decode step of one layer, want 2", got)
	}
	norms := 0
	for _, n := range g.Nodes {
		if n.Bool("batch_decode_writes_codes") {
			delete(n.Attrs, "batch_decode_writes_codes")
			norms++
		}
	}
	if got := quantizes(g, man); norms != 2 || got != 4 {
		t.Errorf("qwen2.5-0.5b without the records of %d norms: %d quantize_x8 launches, want 4", norms, got)
	}
	g, man, _ = lowerGPU(t, writeShapes(t, "phi-3-mini-4k", 1, synth.QuantQ4KM), fullWidthMaxTokens)
	halves := 0
	for _, n := range g.Nodes {
		if n.Bool("batch_decode_writes_codes") {
			t.Errorf("phi-3-mini: %s %%%d writes codes in the batched decode step", n.Op, n.ID)
		}
		if n.Str("batch_decode_kernel") == ir.KernelMMAHalves {
			halves++
		}
	}
	if got := quantizes(g, man); halves != 4 || got != 0 {
		t.Errorf("phi-3-mini: %d mma_halves products, %d quantize_x8 launches in the batched decode step, want 4 and 0", halves, got)
	}
	for _, n := range g.Nodes {
		if n.Str("batch_decode_kernel") == ir.KernelMMAHalves {
			n.Attrs["batch_decode_kernel"] = ir.KernelMMATokens
			for _, k := range []string{"mmah_cluster", "mmah_warps", "mmah_clusters"} {
				delete(n.Attrs, k)
			}
		}
	}
	if got := quantizes(g, man); got != 4 {
		t.Errorf("phi-3-mini on mma_tokens: %d quantize_x8 launches, want 4", got)
	}
}

// An MoE's experts in the batched decode step are its batch_decode_kernel
// too: a gemm record gives the prefill's expert GEMMs there; an mma_tokens
// record for the prefill of a plan of steps over 64 tokens (more slots
// than its scratch) is refused.
func TestBatchDecodeMoEKernelIsRecorded(t *testing.T) {
	g, man, _ := tinyPlan(t, "gpt-oss-20b-tiny", synth.QuantMXFP4)
	kernels := func() string {
		var ks []string
		for _, l := range generate(t, g, man, "").Kernels.BatchDecode {
			if strings.HasPrefix(l.Kernel, "moe_") {
				ks = append(ks, l.Kernel[:strings.Index(l.Kernel, "_Moe")])
			}
		}
		return strings.Join(ks, " ")
	}
	mmat := "moe_route moe_order moe_codes moe_gate_up_mmat moe_codes moe_down_mmat moe_sum"
	if got := kernels(); !strings.HasPrefix(got, mmat+" ") {
		t.Errorf("the batched decode step's MoE launches %s", got)
	}
	for _, n := range g.Nodes {
		if n.Op == ir.OpMoE {
			n.Attrs["batch_decode_kernel"] = ir.KernelGEMM
		}
	}
	if got := kernels(); strings.Contains(got, "mmat") || !strings.Contains(got, "moe_gate_up_gemm") {
		t.Errorf("with batch_decode_kernel gemm, the batched decode step's MoE launches %s", got)
	}
	g, man, _ = lowerGPU(t, writeTiny(t, "gpt-oss-20b-tiny", synth.QuantMXFP4), 128)
	for _, n := range g.Nodes {
		if n.Op == ir.OpMoE {
			n.Attrs["prefill_kernel"] = ir.KernelMMATokens
		}
	}
	if _, err := cuda.Generate(g, man, cuda.Options{}); err == nil || !strings.Contains(err.Error(), "serve steps of at most 64 tokens; the plan's prefill takes 128") {
		t.Errorf("an mma_tokens MoE in a prefill of 128 tokens: %v", err)
	}
}

// attend_paged takes the geometry its node records (choosePagedAttention):
// the ring's stages size its shared memory and the recorded splits and
// least tiles a split deal its key tiles (template arguments all);
// another record changes the launch, and a graph without one is refused.
func TestAttendPagedTakesRecordedGeometry(t *testing.T) {
	g, man, _ := tinyPlan(t, "phi-3-mini-4k-tiny", synth.QuantQ4KM)
	var atts []*ir.Node
	for _, n := range g.Nodes {
		if n.Op == ir.OpAttention {
			atts = append(atts, n)
		}
	}
	launch := func() plans.Launch {
		for _, l := range generate(t, g, man, "").Kernels.Batch {
			if strings.HasPrefix(l.Kernel, "attend_paged_Attn") {
				return l
			}
		}
		t.Fatal("no attend_paged launch in the batched step")
		return plans.Launch{}
	}
	hd := atts[0].Int("head_dim")
	for _, c := range []struct{ stages, splits, tiles int64 }{
		{atts[0].Int("paged_stages"), atts[0].Int("paged_splits"), atts[0].Int("paged_split_tiles")}, {4, 8, 2}} {
		for _, n := range atts {
			n.Attrs["paged_stages"], n.Attrs["paged_splits"], n.Attrs["paged_split_tiles"] = c.stages, c.splits, c.tiles
		}
		l := launch()
		if want := c.stages * passes.PagedAttnStageBytes(hd, false); int64(l.Smem) != want || !strings.Contains(l.Kernel, fmt.Sprintf("_%d_%d_%d_", c.splits, c.tiles, c.stages)) {
			t.Errorf("%d stages, %d splits of %d tiles: %s with %d bytes of shared memory, want %d", c.stages, c.splits, c.tiles, l.Kernel, l.Smem, want)
		}
	}
	delete(atts[0].Attrs, "paged_stages")
	delete(atts[0].Attrs, "paged_splits")
	delete(atts[0].Attrs, "paged_split_tiles")
	if _, err := cuda.Generate(g, man, cuda.Options{}); err == nil || !strings.Contains(err.Error(), "no batched-step geometry") {
		t.Errorf("an attention without its batched-step geometry: %v", err)
	}
}

package cuda_test

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/llama-orch/orc/codegen/cuda"
	"github.com/llama-orch/orc/compiler/synth"
	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/passes"
	"github.com/llama-orch/orc/plans"
	"github.com/llama-orch/orc/runtime"
	rcuda "github.com/llama-orch/orc/runtime/cuda"
)

// pagedSweep are the batched-step attention tunings (the target's
// description that passes.ChoosePagedAttention reads, edited)
// TestGPUPagedAttentionTiming times with ORC_PAGED_SWEEP=1: the target's,
// then each of its choices moved.
var pagedSweep = []decodeTuning{
	{"target", nil},
	{"two waves", func(g *passes.GPU) { g.PagedAttnWaves = 2 }},
	{"four waves", func(g *passes.GPU) { g.PagedAttnWaves = 4 }},
	{"3 stages", func(g *passes.GPU) { g.PagedAttnSmem = 3 * passes.PagedAttnStageBytes(96, false) }},
	{"4 stages", func(g *passes.GPU) { g.PagedAttnSmem = 4 * passes.PagedAttnStageBytes(96, false) }},
}

// TestGPUPagedAttentionTiming times the batched step's attention kernels
// alone, at Phi-3-mini's and Qwen2.5-0.5B's widths (one layer): 16 decode
// rows at 512, 576 and 2,048 keys each, and one row's 512-token prompt
// chunk after 0 and 1,536 cached keys. Each launch is timed between two
// events (rcuda.Options.ProfileFile; a kernel's own time, its ramp and
// tail included); it prints µs a launch of attend_paged (its splits'
// merge included) and kv_store_paged, attend_paged's K+V read rate in
// decode and its tensor-core rate in the chunk. The harness's plans have
// no batched decode schedule, so its decode rows run the general kernel
// (TestGPUPagedDecodeTiming times the decode schedule's). The pool is not
// filled: rows name their positions, and its contents do not change the
// work.
// ORC_PAGED_SWEEP=1 times the decode under pagedSweep's tunings too. Speed
// is printed, never asserted.
func TestGPUPagedAttentionTiming(t *testing.T) {
	gpuOnly(t)
	const ctx, seqs, steps = 4096, 16, 20
	tunings := pagedSweep[:1]
	if os.Getenv("ORC_PAGED_SWEEP") == "1" {
		tunings = pagedSweep
	}
	r := rand.New(rand.NewPCG(11, 12))
	type plan struct {
		attnPlan
		d  *attnData
		tu decodeTuning
	}
	var ps []plan
	var aps []attnPlan
	for _, c := range attnCases[:2] { // Qwen2.5-0.5B, Phi-3-mini
		d := newAttnData(c, r)
		for _, tu := range tunings {
			p := newAttnPlan(t, c, 1, false, ctx, tu)
			ps, aps = append(ps, plan{p, d, tu}), append(aps, p)
		}
	}
	compilePlans(t, aps)
	for _, p := range ps {
		c := p.d.c
		dir := writeGenerated(t, p.out, p.man, p.d.bytes)
		// measure opens the plan with a launch profile, runs steps steps of
		// rows (rows(s): sequence s's row, nil: it sits out) and returns µs
		// a launch by kernel family.
		measure := func(name string, rows func(s int, blocks []int32) *runtime.BatchRow) map[string]float64 {
			prof := filepath.Join(t.TempDir(), name+".prof")
			dev := openPlanDir(t, dir, rcuda.Options{Ctx: ctx, ProfileFile: prof})
			perSeq := ctx / pagedBlock
			perBlock := int64(2 * pagedBlock * c.kvh * c.hd * 2)
			b, err := dev.NewBatch(runtime.BatchConfig{Sequences: seqs, StepTokens: attnMaxTokens, BlockTokens: pagedBlock,
				KVBytes: int64(seqs*perSeq+1) * perBlock})
			if err != nil {
				t.Fatal(err)
			}
			var step []runtime.BatchRow
			for s := range seqs {
				blocks := make([]int32, perSeq)
				for j := range blocks {
					blocks[j] = int32(s*perSeq + j)
				}
				if row := rows(s, blocks); row != nil {
					step = append(step, *row)
				}
			}
			for range steps {
				if _, err := b.Step(context.Background(), step); err != nil {
					t.Fatal(err)
				}
			}
			b.Close()
			if err := dev.Close(); err != nil {
				t.Fatal(err)
			}
			return pagedMicros(t, prof, "batch")
		}
		for _, keys := range []int{512, 576, 2048} {
			us := measure("decode", func(s int, blocks []int32) *runtime.BatchRow {
				return &runtime.BatchRow{Tokens: []int32{pagedToken(s, attnRows)(keys - 1)}, Pos: keys - 1, Blocks: blocks}
			})
			kv := float64(seqs * keys * c.kvh * c.hd * 2 * 2)
			t.Logf("%-13s %-10s %2d rows × %4d keys: attend_paged %6.1f µs (K+V %6.1f MB, %4.2f TB/s), kv_store %5.1f µs",
				c.name, p.tu.name, seqs, keys, us["attend_paged"], kv/1e6, kv/us["attend_paged"]/1e6, us["kv_store_paged"])
		}
		if p.tu.tune != nil {
			continue
		}
		for _, cached := range []int{0, 1536} {
			us := measure("prefill", func(s int, blocks []int32) *runtime.BatchRow {
				if s > 0 {
					return nil
				}
				ts := make([]int32, attnMaxTokens)
				for j := range ts {
					ts[j] = pagedToken(s, attnRows)(cached + j)
				}
				return &runtime.BatchRow{Tokens: ts, Pos: cached, Blocks: blocks}
			})
			var flops float64
			for j := cached; j < cached+attnMaxTokens; j++ {
				flops += float64((j + 1) * c.heads * c.hd * 4)
			}
			t.Logf("%-13s chunk of %d after %4d: attend_paged %7.1f µs (%5.1f TFLOP/s, causal q·k and p·v), kv_store %5.1f µs",
				c.name, attnMaxTokens, cached, us["attend_paged"], flops/us["attend_paged"]/1e6, us["kv_store_paged"])
		}
	}
}

// pagedMicros gives a launch profile's µs a launch of the paged
// attention's kernels by family (attend_paged, kv_store_paged) in its
// schedule schedule ("batch", "batch decode").
func pagedMicros(t *testing.T, path, schedule string) map[string]float64 {
	t.Helper()
	us := map[string]float64{}
	for k, each := range launchMicros(t, path)[schedule] {
		for _, fam := range []string{"attend_paged", "kv_store_paged"} {
			if strings.HasPrefix(k, fam+"_") {
				us[fam] = each
			}
		}
	}
	if us["attend_paged"] == 0 {
		t.Fatalf("%s: no attend_paged launch in the %s schedule", path, schedule)
	}
	return us
}

// TestGPUPagedDecodeTiming times attend_paged where batched decode steps
// of a quantized model run it: the batched decode schedule's kernel (a
// token a row, batch.go's batchDecodeTokens), which the harness's plans
// (no matrix products) lack. One layer of Phi-3-mini and Qwen2.5-0.5B at
// their real widths, weights of zeros (writeShapes: the work does not
// depend on them), 16 rows (and 64 of Qwen) at 512, 640 and 2,048 keys
// each; it prints µs a launch of attend_paged (its splits' merge
// included) and kv_store_paged and the K+V read rate. ORC_PAGED_SWEEP=1
// times pagedDecodeSweep's geometries too, a list of split counts
// (ORC_PAGED_SWEEP=4,8; a lone 1 is the former) those most splits of a
// key tile or more, and ORC_PAGED_TILES=4,8 the passes' splits of those
// least key tiles. ORC_PAGED_MODELS=preset,... times those presets at 16
// and 64 rows instead, ORC_PAGED_ROWS=2,4 and ORC_PAGED_KEYS=512,4000
// those rows and keys (the context grows to hold them), ORC_PAGED_KV=q8
// with an 8-bit cache (compiler.Options.KVCache). Speed is printed, never
// asserted.
func TestGPUPagedDecodeTiming(t *testing.T) {
	gpuOnly(t)
	const steps = 20
	keys, rowCounts := envInts(t, "ORC_PAGED_KEYS", []int{512, 640, 2048}), envInts(t, "ORC_PAGED_ROWS", nil)
	ctx := max(4096, (slices.Max(keys)/batchBlock+1)*batchBlock)
	sweep := slices.Clone(pagedDecodeSweep[:1])
	switch env := os.Getenv("ORC_PAGED_SWEEP"); env {
	case "", "0":
	case "1":
		sweep = pagedDecodeSweep
	default:
		for _, z := range envInts(t, "ORC_PAGED_SWEEP", nil) {
			if z > ir.MaxPagedSplits || z&(z-1) != 0 {
				t.Fatalf("ORC_PAGED_SWEEP=%s: split counts are powers of two, 1 to %d", env, ir.MaxPagedSplits)
			}
			sweep = append(sweep, pagedGeo{splits: int64(z), tiles: 1})
		}
	}
	for _, n := range envInts(t, "ORC_PAGED_TILES", nil) {
		sweep = append(sweep, pagedGeo{tiles: int64(n)})
	}
	type model struct {
		preset string
		rows   []int
	}
	models := []model{{"phi-3-mini-4k", []int{16}}, {"qwen2.5-0.5b", []int{16, 64}}}
	if env := os.Getenv("ORC_PAGED_MODELS"); env != "" {
		models = models[:0]
		for _, p := range strings.Split(env, ",") {
			models = append(models, model{p, []int{16, 64}})
		}
	}
	if rowCounts != nil {
		for i := range models {
			models[i].rows = rowCounts
		}
	}
	for _, c := range models {
		path := writeShapes(t, c.preset, 1, synth.QuantQ4KM)
		g, man, f := lowerForKV(t, path, batchMaxTokens, cuda.DefaultArch, os.Getenv("ORC_PAGED_KV"))
		chosen := pagedGeometries(g)
		for _, geo := range sweep {
			name := setPagedGeometry(g, chosen, geo)
			dir := writeEditedPlan(t, g, man, ggufData(f), func(*plans.Kernels) {})
			if man.Kernels.BatchDecodeMaxRows < slices.Max(c.rows) {
				t.Fatalf("%s: the batched decode schedule takes %d rows", c.preset, man.Kernels.BatchDecodeMaxRows)
			}
			for _, rows := range c.rows {
				pagedDecodeTimes(t, dir, man, c.preset+" "+name, rows, keys, ctx, steps)
			}
		}
	}
}

// envInts is the comma-separated positive integers of environment variable
// name, or def where it is unset.
func envInts(t *testing.T, name string, def []int) []int {
	env := os.Getenv(name)
	if env == "" {
		return def
	}
	var out []int
	for _, f := range strings.Split(env, ",") {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			t.Fatalf("%s=%s: want positive integers, comma-separated", name, env)
		}
		out = append(out, n)
	}
	return out
}

// pagedGeo is an attend_paged geometry: paged_splits, paged_stages and
// paged_split_tiles (0 keeps the passes').
type pagedGeo struct{ splits, stages, tiles int64 }

// pagedDecodeSweep are the attend_paged geometries TestGPUPagedDecodeTiming
// times with ORC_PAGED_SWEEP=1 after the passes' own, set on every
// attention: one split, 2 and 8 of a key tile or more (as good as fixed
// counts past 8 key tiles), 3 and 4 stages, splits of 2 and of 16 key
// tiles at least. They are set on the nodes rather than through the
// target's knobs as pagedSweep does: the knobs reach only the tiles the
// rule gives.
var pagedDecodeSweep = []pagedGeo{{}, {1, 0, 1}, {2, 0, 1}, {8, 0, 1}, {1, 3, 1}, {1, 4, 1}, {0, 0, 2}, {0, 0, 16}}

// pagedGeometries are the attentions of g and their geometries as the
// passes chose them.
func pagedGeometries(g *ir.Graph) map[*ir.Node]pagedGeo {
	m := map[*ir.Node]pagedGeo{}
	for _, n := range g.Nodes {
		if n.Op == ir.OpAttention {
			m[n] = pagedGeo{n.Int("paged_splits"), n.Int("paged_stages"), n.Int("paged_split_tiles")}
		}
	}
	return m
}

// setPagedGeometry gives the attentions of chosen geometry geo (its zeros
// as chosen) and names it.
func setPagedGeometry(g *ir.Graph, chosen map[*ir.Node]pagedGeo, geo pagedGeo) string {
	var z pagedGeo
	for n, c := range chosen {
		z = pagedGeo{cmp.Or(geo.splits, c.splits), cmp.Or(geo.stages, c.stages), cmp.Or(geo.tiles, c.tiles)}
		n.Attrs["paged_splits"], n.Attrs["paged_stages"], n.Attrs["paged_split_tiles"] = z.splits, z.stages, z.tiles
	}
	name := fmt.Sprintf("%dz %ds %dt", z.splits, z.stages, z.tiles)
	if geo == (pagedGeo{}) {
		name = "passes' " + name
	}
	return name
}

// pagedDecodeTimes prints TestGPUPagedDecodeTiming's figures of the plan in
// dir (name: the model and geometry) at rows rows of each of keys keys.
func pagedDecodeTimes(t *testing.T, dir string, man *plans.Manifest, name string, rows int, keyCounts []int, ctx, steps int) {
	t.Helper()
	for _, keys := range keyCounts {
		prof := filepath.Join(t.TempDir(), "decode.prof")
		dev := openPlanDir(t, dir, rcuda.Options{Ctx: ctx, ProfileFile: prof})
		perSeq := ctx / batchBlock
		b, err := dev.NewBatch(runtime.BatchConfig{Sequences: rows, StepTokens: batchMaxTokens, BlockTokens: batchBlock,
			KVBytes: int64(rows*perSeq+1) * kvBlockBytes(man)}) // and the block the batch reserves
		if err != nil {
			t.Fatal(err)
		}
		step := make([]runtime.BatchRow, rows)
		for s := range step {
			blocks := make([]int32, perSeq)
			for j := range blocks {
				blocks[j] = int32(s*perSeq + j)
			}
			step[s] = runtime.BatchRow{Tokens: []int32{1}, Pos: keys - 1, Blocks: blocks}
		}
		for range steps {
			if _, err := b.Step(context.Background(), step); err != nil {
				t.Fatal(err)
			}
		}
		b.Close()
		if err := dev.Close(); err != nil { // writes the profile
			t.Fatal(err)
		}
		us := pagedMicros(t, prof, "batch decode")
		kv := float64(int64(rows*keys)*kvBlockBytes(man)) / batchBlock
		t.Logf("%-30s %2d rows × %4d keys: attend_paged %6.1f µs (K+V %6.1f MB, %4.2f TB/s), kv_store %5.1f µs",
			name, rows, keys, us["attend_paged"], kv/1e6, kv/us["attend_paged"]/1e6, us["kv_store_paged"])
	}
}

package cuda

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/llama-orch/orc/plans"
)

func TestLaunchRecMatchesC(t *testing.T) {
	if got := unsafe.Sizeof(launchRec{}); got != launchRecordSize {
		t.Fatalf("launchRec is %d bytes, C orc_launch_rec %d", got, launchRecordSize)
	}
}

func TestGridDims(t *testing.T) {
	cases := []struct {
		a, b, div [3]int64
		T         int64
		want      [3]uint32
	}{
		{[3]int64{1, 0, 0}, [3]int64{0, 1, 1}, [3]int64{}, 7, [3]uint32{7, 1, 1}},
		{[3]int64{1, 0, 0}, [3]int64{0, 1, 1}, [3]int64{4, 0, 0}, 7, [3]uint32{2, 1, 1}},
		{[3]int64{1, 0, 0}, [3]int64{0, 1, 1}, [3]int64{4, 0, 0}, 8, [3]uint32{2, 1, 1}},
		{[3]int64{0, 2, 0}, [3]int64{896, 3, 1}, [3]int64{128, 2, 0}, 5, [3]uint32{7, 7, 1}},
		{[3]int64{0, 0, 0}, [3]int64{151936, 1, 1}, [3]int64{256, 0, 0}, 1, [3]uint32{594, 1, 1}},
	}
	for i, c := range cases {
		l := plans.Launch{Kernel: "k", GridA: c.a, GridB: c.b, GridDiv: c.div}
		got, err := gridDims(&l, c.T, 0)
		if err != nil || got != c.want {
			t.Errorf("case %d: got %v, %v; want %v", i, got, err, c.want)
		}
	}
	for _, bad := range []plans.Launch{
		{Kernel: "zero", GridB: [3]int64{0, 1, 1}},
		{Kernel: "negdiv", GridB: [3]int64{1, 1, 1}, GridDiv: [3]int64{-1, 0, 0}},
		{Kernel: "ybig", GridB: [3]int64{1, 70000, 1}},
	} {
		if _, err := gridDims(&bad, 1, 0); err == nil || !strings.Contains(err.Error(), bad.Kernel) {
			t.Errorf("%s: want an error naming the kernel, got %v", bad.Kernel, err)
		}
	}
}

func testRegions() *regions {
	return &regions{
		weights: 0x1000000, weightBytes: 4096,
		arena: 0x2000000, arenaBytes: 1024,
		state: 0x3000000, stateBytes: 256,
		kv: 0x4000000, kvBytes: 2 * 2 * 64 * 8 * 2, // 2 layers, ctx 64, kv_dim 8
		ctx: 64,
	}
}

func TestResolveArgs(t *testing.T) {
	sched := []plans.Launch{
		{Kernel: "a", GridA: [3]int64{1, 0, 0}, GridB: [3]int64{0, 1, 1}, Block: [3]int{32, 1, 1}, Smem: 128, Args: []plans.Arg{
			{Kind: plans.ArgWeight, Offset: 512},
			{Kind: plans.ArgArena, Offset: 256},
			{Kind: plans.ArgState, Offset: 4},
			// layer 1, V: (1*2+1)*8*2 bytes at ctx 1
			{Kind: plans.ArgKV, Offset: 48},
			{Kind: plans.ArgInt, Value: -3},
		}},
		{Kernel: "b", GridB: [3]int64{2, 1, 1}, Block: [3]int{64, 2, 1}},
	}
	fns := map[string]uint64{"a": 11, "b": 22}
	var b batch
	if err := resolve(sched, fns, 5, 0, testRegions(), &b); err != nil {
		t.Fatal(err)
	}
	want := []uint64{0x1000000 + 512, 0x2000000 + 256, 0x3000000 + 4, 0x4000000 + 48*64, ^uint64(2)}
	if len(b.argv) != len(want) {
		t.Fatalf("argv %v", b.argv)
	}
	for i := range want {
		if b.argv[i] != want[i] {
			t.Errorf("arg %d = %#x, want %#x", i, b.argv[i], want[i])
		}
	}
	a := b.launches[0]
	if a.fn != 11 || a.grid != [3]uint32{5, 1, 1} || a.block != [3]uint32{32, 1, 1} || a.smem != 128 || a.argc != 5 {
		t.Errorf("launch a = %+v", a)
	}
	if l := b.launches[1]; l.fn != 22 || l.grid != [3]uint32{2, 1, 1} || l.argc != 0 {
		t.Errorf("launch b = %+v", l)
	}
	// The batch is reused: resolving again must not grow it.
	if err := resolve(sched, fns, 1, 0, testRegions(), &b); err != nil || len(b.launches) != 2 || len(b.argv) != 5 {
		t.Errorf("re-resolve: %d launches, %d args, %v", len(b.launches), len(b.argv), err)
	}
}

func TestResolveRefusesOutOfRegion(t *testing.T) {
	for _, c := range []struct {
		arg  plans.Arg
		want string
	}{
		{plans.Arg{Kind: plans.ArgWeight, Offset: 4096}, "weight region"},
		{plans.Arg{Kind: plans.ArgArena, Offset: -1}, "arena region"},
		{plans.Arg{Kind: plans.ArgState, Offset: 256}, "state region"},
		{plans.Arg{Kind: plans.ArgKV, Offset: 64}, "kv region"}, // 64*64 = the whole cache
		{plans.Arg{Kind: "texture"}, `unknown argument kind "texture"`},
	} {
		sched := []plans.Launch{{Kernel: "a", GridB: [3]int64{1, 1, 1}, Block: [3]int{1, 1, 1}, Args: []plans.Arg{c.arg}}}
		err := resolve(sched, map[string]uint64{"a": 1}, 1, 0, testRegions(), &batch{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want %q", c.arg, err, c.want)
		}
	}
	err := resolve([]plans.Launch{{Kernel: "gone", GridB: [3]int64{1, 1, 1}}}, map[string]uint64{}, 1, 0, testRegions(), &batch{})
	if err == nil || !strings.Contains(err.Error(), "gone is not in the module") {
		t.Errorf("missing kernel: %v", err)
	}
}

func TestCheckSchedule(t *testing.T) {
	ok := plans.Launch{Kernel: "k", GridA: [3]int64{1, 0, 0}, GridB: [3]int64{0, 1, 1}, Block: [3]int{256, 1, 1}}
	if err := checkSchedule("prefill", []plans.Launch{ok}, 512); err != nil {
		t.Fatal(err)
	}
	bad := func(f func(l *plans.Launch)) plans.Launch { l := ok; f(&l); return l }
	for want, l := range map[string]plans.Launch{
		"block dimension 0 is 0":       bad(func(l *plans.Launch) { l.Block[0] = 0 }),
		"2048 threads per block":       bad(func(l *plans.Launch) { l.Block = [3]int{32, 64, 1} }),
		"shared memory -1":             bad(func(l *plans.Launch) { l.Smem = -1 }),
		"grid dimension 0 is 0 at T=1": bad(func(l *plans.Launch) { l.GridA[0] = 0 }),
		`unknown kind "ptr"`:           bad(func(l *plans.Launch) { l.Args = []plans.Arg{{Kind: "ptr"}} }),
	} {
		if err := checkSchedule("prefill", []plans.Launch{l}, 512); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("want %q, got %v", want, err)
		}
	}
}

// TestGridSplits: a launch with a split rule takes grid z from the keys
// its step's queries see, not from GridB; its most where they are unknown
// or the layer is windowed.
func TestGridSplits(t *testing.T) {
	// keys k: the last query at position k − 1 sees ceil(k/64) key tiles.
	l := plans.Launch{Kernel: "attend_paged", GridA: [3]int64{1, 0, 0}, GridB: [3]int64{0, 2, 16}, Block: [3]int{128, 1, 1}, Splits: &plans.SplitRule{Most: 16, Tiles: 4, KeyTile: 64}}
	for _, c := range []struct{ keys, z int64 }{{0, 16}, {1, 1}, {448, 1}, {449, 2}, {960, 2}, {961, 4}, {3584, 8}, {4096, 16}, {30000, 16}} {
		g, err := gridDims(&l, 64, c.keys)
		if err != nil || g != [3]uint32{64, 2, uint32(c.z)} {
			t.Errorf("%d keys: grid %v, %v; want z %d", c.keys, g, err, c.z)
		}
	}
	l.Splits.Windowed = true
	if g, _ := gridDims(&l, 1, 100); g[2] != 16 {
		t.Errorf("windowed: z %d, want the rule's most", g[2])
	}
	l.Splits.Tiles = 3
	if err := checkSchedule("batch", []plans.Launch{l}, 8); err == nil || !strings.Contains(err.Error(), "powers of two") {
		t.Errorf("a rule of 3 tiles a split: %v, want refused", err)
	}
}

// TestGraphKeyFixesSplits: every step under one graph key takes the grids
// of the keys capture launches it with, for any rule of powers of two.
func TestGraphKeyFixesSplits(t *testing.T) {
	for _, r := range []plans.SplitRule{{Most: 16, Tiles: 4, KeyTile: 64}, {Most: 8, Tiles: 8, KeyTile: 64}, {Most: 4, Tiles: 1, KeyTile: 64}, {Most: 1, Tiles: 4, KeyTile: 64}} {
		for keys := int64(1); keys <= 40000; keys += 7 {
			gk := graphKeyOf(4, keys)
			captured := (int64(1)<<gk.keyBits - 1) * graphKeyTile
			if graphKeyOf(4, captured) != gk || r.Of(captured) != r.Of(keys) {
				t.Fatalf("rule %+v, %d keys: key %v, captured at %d keys (key %v): %d splits, the step needs %d", r, keys, gk, captured, graphKeyOf(4, captured), r.Of(captured), r.Of(keys))
			}
		}
	}
}

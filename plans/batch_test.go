package plans

import (
	"io"
	"path/filepath"
	"reflect"
	"testing"
)

// The batched step's schedule (a launch's split rule too), sizes and state
// fields survive the manifest's round trip, and a plan without them reads back with none.
func TestBatchFieldsRoundTrip(t *testing.T) {
	launch := Launch{Kernel: "attend_paged_x", GridA: [3]int64{1, 0, 0}, GridB: [3]int64{0, 2, 1}, Block: [3]int{128, 1, 1},
		Args: []Arg{{Kind: ArgKVPool}, {Kind: ArgBatch, Offset: 512}, {Kind: ArgState, Offset: 4096}}}
	split := launch
	split.Splits = &SplitRule{Most: 16, Tiles: 4, KeyTile: 64, Windowed: true}
	k := &Kernels{
		Arch: "sm_90", Prefill: []Launch{launch}, Decode: []Launch{launch},
		Batch: []Launch{launch, split}, BatchRows: []Launch{launch, launch},
		BatchDecode: []Launch{launch, launch, launch}, BatchDecodeMaxRows: 16,
		BatchMaxRows: 64, BatchBytes: 1 << 20, BatchLogits: 4096,
		State: State{Bytes: 1024, RowOf: 1024, LastTokens: 1280, Rows: 1536, Paging: 1552, Picks: 1568, Tables: 2048},
	}
	for _, tc := range []struct {
		name string
		k    *Kernels
	}{{"batch", k}, {"no batch", &Kernels{Arch: "sm_90", Prefill: []Launch{launch}}}} {
		dir := filepath.Join(t.TempDir(), "plan")
		m := &Manifest{Target: "sm_90", Model: Model{Name: "t"}, Kernels: tc.k}
		if err := Write(dir, m, func(int, *Tensor, io.Writer) error { return nil }, nil); err != nil {
			t.Fatal(err)
		}
		p, err := Open(dir, OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(p.Manifest.Kernels, tc.k) {
			t.Errorf("%s: read back %+v, wrote %+v", tc.name, p.Manifest.Kernels, tc.k)
		}
		p.Close()
	}
}

// TestSplitRule: a step's splits by the keys its queries see, its most
// where they are unknown or the layer is windowed; rules the runtime
// cannot key graphs by refused.
func TestSplitRule(t *testing.T) {
	r := &SplitRule{Most: 8, Tiles: 8, KeyTile: 64}
	for _, c := range []struct{ keys, want int64 }{{0, 8}, {1, 1}, {960, 1}, {1024, 2}, {1025, 2}, {2048, 4}, {4096, 8}, {100000, 8}} {
		if got := r.Of(c.keys); got != c.want {
			t.Errorf("%d keys: %d splits, want %d", c.keys, got, c.want)
		}
	}
	if w := (&SplitRule{Most: 2, Tiles: 4, KeyTile: 64, Windowed: true}); w.Of(64) != 2 {
		t.Errorf("windowed: %d splits, want its most", w.Of(64))
	}
	for _, bad := range []SplitRule{{Most: 3, Tiles: 4, KeyTile: 64}, {Most: 4, Tiles: 6, KeyTile: 64}, {Most: 4, Tiles: 4}, {Tiles: 4, KeyTile: 64}} {
		if bad.Check() == nil {
			t.Errorf("%+v: want refused", bad)
		}
	}
	if (&SplitRule{Most: 16, Tiles: 4, KeyTile: 64}).Check() != nil {
		t.Error("a rule of powers of two refused")
	}
}

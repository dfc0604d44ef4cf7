package plans

import (
	"io"
	"path/filepath"
	"reflect"
	"testing"
)

// The batched step's schedule, sizes and state fields survive the
// manifest's round trip, and a plan without them reads back with none.
func TestBatchFieldsRoundTrip(t *testing.T) {
	launch := Launch{Kernel: "attend_paged_x", GridA: [3]int64{1, 0, 0}, GridB: [3]int64{0, 2, 1}, Block: [3]int{128, 1, 1},
		Args: []Arg{{Kind: ArgKVPool}, {Kind: ArgBatch, Offset: 512}, {Kind: ArgState, Offset: 4096}}}
	k := &Kernels{
		Arch: "sm_90", Prefill: []Launch{launch}, Decode: []Launch{launch},
		Batch: []Launch{launch}, BatchRows: []Launch{launch, launch},
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

package plans

import (
	"strings"
	"testing"
)

func TestTensorRows(t *testing.T) {
	// q4_0 [96, 64]: 2 blocks of 18 bytes per row.
	qkv := Tensor{Name: "attn_qkv.weight", DType: "q4_0", Shape: []int64{96, 64}, Bytes: 96 * 36}
	split := qkv
	split.Segments = []int64{64, 16, 16}
	cases := []struct {
		t                 Tensor
		first, count      int64
		wantOff, wantSize int64
		wantErr           string
	}{
		{qkv, 0, 96, 0, 96 * 36, ""},
		{qkv, 64, 16, 64 * 36, 16 * 36, ""},
		{qkv, 90, 7, 0, 0, "rows [90, 97) outside tensor attn_qkv.weight's 96 rows"},
		{qkv, -1, 2, 0, 0, "outside"},
		{split, 80, 16, 80 * 36, 16 * 36, ""},
		{split, 64, 32, 0, 0, "are not one of its layout segments [64 16 16]"},
		{Tensor{Name: "odd", Shape: []int64{3, 4}, Bytes: 10}, 0, 1, 0, 0, "has no whole rows"},
	}
	for _, c := range cases {
		off, size, err := c.t.Rows(c.first, c.count)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s rows(%d, %d): error %v, want %q", c.t.Name, c.first, c.count, err, c.wantErr)
			}
			continue
		}
		if err != nil || off != c.wantOff || size != c.wantSize {
			t.Errorf("%s rows(%d, %d) = %d, %d, %v; want %d, %d", c.t.Name, c.first, c.count, off, size, err, c.wantOff, c.wantSize)
		}
	}
}

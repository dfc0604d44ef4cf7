package ir

import (
	"strings"
	"testing"
)

// TestVerifyPrefillSplits checks the prefill attention's recorded geometry:
// all four attributes on an attention, each a positive int64.
func TestVerifyPrefillSplits(t *testing.T) {
	const attn = `heads=4 kv_heads=2 layer=0`
	const all = `prefill_split_blocks=396 prefill_split_keys=512 prefill_split_parts=1584 prefill_splits=8 `
	cases := []struct {
		name, old, new, want string
	}{
		{"all four", attn, all + attn, ""},
		{"one missing", attn, `prefill_split_keys=512 prefill_split_parts=1584 prefill_splits=8 ` + attn, "3 of [prefill_splits prefill_split_keys prefill_split_blocks prefill_split_parts]"},
		{"zero splits", attn, strings.Replace(all, "prefill_splits=8", "prefill_splits=0", 1) + attn, "attr prefill_splits = 0, want an int64 ≥ 1"},
		{"float keys", attn, strings.Replace(all, "prefill_split_keys=512", "prefill_split_keys=512.0", 1) + attn, "attr prefill_split_keys = 512, want an int64 ≥ 1"},
		{"not an attention", `%18 = add(%3, %17) f32[T,256]`, `%18 = add(%3, %17) f32[T,256] {` + strings.TrimSpace(all) + `}`, "%18 add: [prefill_splits prefill_split_keys prefill_split_blocks prefill_split_parts] on a add"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			text := readFixture(t, "dense.ir")
			if !strings.Contains(text, c.old) {
				t.Fatalf("fixture dense.ir lacks %q", c.old)
			}
			g, err := Parse(strings.Replace(text, c.old, c.new, 1))
			if err == nil {
				err = Verify(g)
			}
			if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}

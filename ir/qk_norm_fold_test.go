package ir

import (
	"strings"
	"testing"
)

// qkNormLayer is a decode attention whose q and k are normed per head and
// rotated between the qkv and the attention; {rot}, {geometry} and
// {outputs} are filled in by the cases.
const qkNormLayer = `graph {max_tokens=8}
%0 = input() i32[T] {name="tokens"}
%1 = input() i32[T] {name="positions"}
%2 = weight() f32[100,64] {name="token_embd.weight"}
%3 = embed(%2, %0) f32[T,64]
%4 = weight() f16[64,64] {name="wq"}
%5 = weight() f16[32,64] {name="wk"}
%6 = weight() f16[32,64] {name="wv"}
%7 = weight() f32[16] {name="q_norm"}
%8 = weight() f32[16] {name="k_norm"}
%9 = qkv(%3, %4, %5, %6) f32[T,128] {parts=[64,32,32]}
%10 = view(%9) f32[T,64] {part=0}
%11 = view(%9) f32[T,32] {part=1}
%12 = view(%9) f32[T,32] {part=2}
%13 = norm_rope(%10, %7, %1) f32[T,64] {base=1e+06 eps=1e-06 head_dim=16 heads=4 mode="neox" rot_dim={rot}}
%14 = norm_rope(%11, %8, %1) f32[T,32] {base=1e+06 eps=1e-06 head_dim=16 heads=2 mode="neox" rot_dim={rot}}
%15 = attention(%13, %14, %12) f32[T,64] {{geometry} fold_qk_norm=true head_dim=16 heads=4 kv_heads=2 layer=0 scale=0.25 window=0}
outputs({outputs})
`

// TestVerifyQKNormFolds: the verifier takes fold_qk_norm on an attention
// with a decode geometry reading q and k norm_ropes of one qkv's parts
// over whole heads, and refuses it where a norm_rope has another reader
// (it computes nothing in decode), rotates part of a head, or the
// attention has no decode geometry.
func TestVerifyQKNormFolds(t *testing.T) {
	const geometry = "decode_cluster=1 decode_min_keys=256 decode_splits=16 decode_stages=2"
	for _, c := range []struct {
		name, rot, geometry, outputs string
		want                         string // "": accepted
	}{
		{"whole heads", "16", geometry, "%15", ""},
		{"q norm read elsewhere", "16", geometry, "%15, %13", "other readers"},
		{"half of each head rotated", "8", geometry, "%15", "does not read"},
		{"no decode geometry", "16", "", "%15", "without a decode geometry"},
	} {
		text := strings.NewReplacer("{rot}", c.rot, "{geometry}", c.geometry, "{outputs}", c.outputs).Replace(qkNormLayer)
		g, err := Parse(text)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		err = Verify(g)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

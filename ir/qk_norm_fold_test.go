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

// TestVerifyQKVStoresKV: the verifier takes qkv_stores_kv on an attention
// whose k and v are parts 1 and 2 of one qkv, kv_heads·head_dim wide, with
// an fp16 cache, and refuses it over norm_ropes, with an 8-bit cache, or
// beside a folded store.
func TestVerifyQKVStoresKV(t *testing.T) {
	const plain = `%15 = attention(%10, %11, %12) f32[T,64] {head_dim=16 heads=4 kv_heads=2 layer=0 scale=0.25 window=0}`
	base := strings.NewReplacer("{rot}", "16", "{outputs}", "%15").Replace(qkNormLayer)
	folded := strings.NewReplacer("{geometry}", "decode_cluster=1 decode_min_keys=256 decode_splits=16 decode_stages=2").Replace(base)
	at := strings.Index(folded, "%15 = attention")
	direct := folded[:at] + plain + "\noutputs(%15)\n"
	for _, c := range []struct{ name, text, want string }{
		{"one qkv's parts", strings.Replace(direct, "window=0}", "qkv_stores_kv=true window=0}", 1), ""},
		{"over norm_ropes", strings.Replace(folded, "fold_qk_norm=true", "qkv_stores_kv=true", 1), "are not an fp16 cache's parts"},
		{"an 8-bit cache", strings.Replace(direct, "window=0}", `kv_cache="q8" qkv_stores_kv=true window=0}`, 1), "are not an fp16 cache's parts"},
		{"beside a folded store", strings.Replace(folded, "fold_qk_norm=true", "fold_qk_norm=true qkv_stores_kv=true", 1), "qkv_stores_kv"},
	} {
		g, err := Parse(c.text)
		if err == nil {
			err = Verify(g)
		}
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

package passes

import (
	"fmt"
	"strings"
	"testing"

	"github.com/llama-orch/orc/ir"
)

// qkvLayer is a Llama-style attention over rows of 256 after an RMSNorm:
// q of 8 heads of 32, k and v of 2 (grouped), weights of types q, k and v,
// RoPE of mode rope (none where "") on q and k; compiled for sm_90.
func qkvLayer(t *testing.T, q, k, v ir.DType, rope string) *ir.Graph {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, `graph {max_tokens=8}
%%0 = input() i32[T] {name="tokens"}
%%1 = input() i32[T] {name="positions"}
%%2 = weight() f32[100,256] {name="token_embd.weight"}
%%3 = embed(%%2, %%0) f32[T,256]
%%4 = weight() f32[256] {name="blk.0.attn_norm.weight"}
%%5 = rmsnorm(%%3, %%4) f32[T,256] {eps=1e-05}
%%6 = weight() %s[256,256] {name="blk.0.attn_q.weight"}
%%7 = weight() %s[64,256] {name="blk.0.attn_k.weight"}
%%8 = weight() %s[64,256] {name="blk.0.attn_v.weight"}
%%9 = linear(%%5, %%6) f32[T,256]
%%10 = linear(%%5, %%7) f32[T,64]
%%11 = linear(%%5, %%8) f32[T,64]
`, q, k, v)
	qr, kr := "%9", "%10"
	if rope != "" {
		fmt.Fprintf(&b, `%%12 = rope(%%9, %%1) f32[T,256] {base=10000.0 head_dim=32 heads=8 mode="%s" rot_dim=32}
%%13 = rope(%%10, %%1) f32[T,64] {base=10000.0 head_dim=32 heads=2 mode="%s" rot_dim=32}
`, rope, rope)
		qr, kr = "%12", "%13"
	}
	fmt.Fprintf(&b, "%%14 = attention(%s, %s, %%11) f32[T,256] {head_dim=32 heads=8 kv_heads=2 layer=0 scale=0.17677669529663687 window=0}\n", qr, kr)
	b.WriteString("%15 = last(%14) f32[1,256]\noutputs(%15)\n")
	g, err := ir.Parse(b.String())
	if err != nil {
		t.Fatal(err)
	}
	if err := Run(g, Options{Target: "sm_90", Verify: true}); err != nil {
		t.Fatal(err)
	}
	return g
}

// TestQKVTakesTensorCores: a decode qkv takes qkv_mma (kernel mma, the
// RMSNorm before it folded) where q, k and v each have MmaCodes, whatever
// their types and rows: grouped k and v, Llama.cpp's Q4_K_M mix (Q6_K v),
// normal or NeoX RoPE, or none (a per-head norm between the projection
// and RoPE); weights without MmaCodes (Q8_0) keep the integer path.
func TestQKVTakesTensorCores(t *testing.T) {
	for _, c := range []struct {
		q, k, v ir.DType
		rope    string
		want    string
	}{
		{ir.Q4_K, ir.Q4_K, ir.Q6_K, "normal", ir.KernelMMA},
		{ir.Q4_K, ir.Q4_K, ir.Q4_K, "neox", ir.KernelMMA},
		{ir.Q4_K, ir.Q4_K, ir.Q6_K, "", ir.KernelMMA},
		{ir.Q5_K, ir.Q6_K, ir.Q6_K, "normal", ir.KernelMMA},
		{ir.Q8_0, ir.Q8_0, ir.Q8_0, "normal", ir.KernelQ8},
	} {
		name := fmt.Sprintf("%s-%s-%s-rope:%s", c.q, c.k, c.v, c.rope)
		t.Run(name, func(t *testing.T) {
			g := qkvLayer(t, c.q, c.k, c.v, c.rope)
			var qkv *ir.Node
			for _, n := range g.Nodes {
				if n.Op == ir.OpQKV {
					qkv = n
				}
			}
			if qkv == nil {
				t.Fatalf("no qkv:\n%s", ir.Print(g))
			}
			if got := qkv.Str("kernel"); got != c.want {
				t.Fatalf("qkv kernel %q, want %q:\n%s", got, c.want, ir.Print(g))
			}
			if c.want == ir.KernelMMA && (!qkv.Bool("fold_norm") || qkv.Int("stream_smem") == 0) {
				t.Errorf("qkv_mma without its norm folded or its stream: %s", ir.Print(g))
			}
		})
	}
}

package passes

import (
	"testing"

	"github.com/llama-orch/orc/ir"
)

// gemmaBlock is a Gemma-style layer at Gemma-3-4B's widths (sm_90, Q4_K): the
// attention's stand-in (a linear) and the FFN each normed after the branch
// (post-norms), their adds and the next pre-norms as fusePostNorms finds
// them, then a head.
const gemmaBlock = `graph {max_tokens=8}
%0 = input() i32[T] {name="tokens"}
%1 = weight() f32[100,2560] {name="token_embd.weight"}
%2 = embed(%1, %0) f32[T,2560]
%3 = weight() f32[2560] {name="blk.0.attn_norm.weight"}
%4 = rmsnorm(%2, %3) f32[T,2560] {eps=1e-06}
%5 = weight() q4_k[2560,2560] {name="blk.0.attn_output.weight"}
%6 = linear(%4, %5) f32[T,2560]
%7 = weight() f32[2560] {name="blk.0.post_attention_norm.weight"}
%8 = rmsnorm(%6, %7) f32[T,2560] {eps=1e-06}
%9 = weight() f32[2560] {name="blk.0.ffn_norm.weight"}
%10 = add_rmsnorm(%2, %8, %9) f32[T,5120] {eps=1e-06 parts=[2560,2560]}
%11 = view(%10) f32[T,2560] {part=0}
%12 = view(%10) f32[T,2560] {part=1}
%13 = weight() q4_k[10240,2560] {name="blk.0.ffn_gate.weight"}
%14 = weight() q4_k[10240,2560] {name="blk.0.ffn_up.weight"}
%15 = linear(%12, %13) f32[T,10240]
%16 = linear(%12, %14) f32[T,10240]
%17 = geglu(%15, %16) f32[T,10240]
%18 = weight() q4_k[2560,10240] {name="blk.0.ffn_down.weight"}
%19 = linear(%17, %18) f32[T,2560]
%20 = weight() f32[2560] {name="blk.0.post_ffw_norm.weight"}
%21 = rmsnorm(%19, %20) f32[T,2560] {eps=1e-06}
%22 = weight() f32[2560] {name="output_norm.weight"}
%23 = add_rmsnorm(%11, %21, %22) f32[T,5120] {eps=1e-06 parts=[2560,2560]}
%24 = view(%23) f32[T,2560] {part=1}
%25 = last(%24) f32[1,2560]
%26 = weight() q8_0[100,2560] {name="output.weight"}
%27 = linear(%25, %26) f32[1,100]
outputs(%27)
`

// TestPostNormFoldsIntoItsReader: an add_post_rmsnorm whose normed row only
// a decode mma kernel reads (the SwiGLU after the attention's post-norm)
// launches nothing: the SwiGLU records fold_norm and reads the fused
// norm's inputs (readsOf), and the verifier takes the late start after the
// o-proj across the norm that launches nothing. The one before the head
// (a q8 linear) still launches.
func TestPostNormFoldsIntoItsReader(t *testing.T) {
	g, err := ir.Parse(gemmaBlock)
	if err != nil {
		t.Fatal(err)
	}
	if err := Run(g, Options{Target: "sm_90", Verify: true}); err != nil {
		t.Fatal(err)
	}
	var posts []*ir.Node
	var swiglu *ir.Node
	for _, n := range g.Nodes {
		switch n.Op {
		case ir.OpAddPostNorm:
			posts = append(posts, n)
		case ir.OpSwiGLULinear:
			swiglu = n
		}
	}
	if len(posts) != 2 || swiglu == nil {
		t.Fatalf("want two add_post_rmsnorm and a swiglu_linear:\n%s", ir.Print(g))
	}
	if swiglu.Str("kernel") != ir.KernelMMA || !swiglu.Bool("fold_norm") {
		t.Fatalf("the SwiGLU after the post-norm does not fold it (kernel %q):\n%s", swiglu.Str("kernel"), ir.Print(g))
	}
	if ir.NormBehind(swiglu.Inputs[0]) != posts[0] {
		t.Errorf("the SwiGLU's row is not the first post-norm's normed part")
	}
	use := users(g)
	if !normFolded(posts[0], use) || normFolded(posts[1], use) {
		t.Errorf("folded: %v and %v, want the first only", normFolded(posts[0], use), normFolded(posts[1], use))
	}
	reads := readsOf(swiglu)
	for _, in := range posts[0].Inputs {
		found := false
		for _, r := range reads {
			found = found || r == in
		}
		if !found {
			t.Errorf("the SwiGLU's reads lack the norm's input %%%d", in.ID)
		}
	}
}

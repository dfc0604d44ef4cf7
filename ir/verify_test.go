package ir

import (
	"strings"
	"testing"
)

// TestVerifyRejects breaks one rule per case by editing a line of a valid
// fixture, and checks that Verify names the node and the problem.
func TestVerifyRejects(t *testing.T) {
	cases := []struct {
		name, file, old, new, want string
	}{
		{"max_tokens missing", "dense.ir", `graph {arch="qwen2" max_tokens=16}`, `graph {arch="qwen2"}`, "max_tokens (int64) missing"},
		{"max_tokens not int", "dense.ir", `max_tokens=16}`, `max_tokens=16.0}`, "max_tokens has type float64"},
		{"max_tokens zero", "dense.ir", `max_tokens=16}`, `max_tokens=0}`, "max_tokens 0"},
		{"unknown op", "dense.ir", `%18 = add(`, `%18 = plus(`, "%18 plus: op not in the op table"},
		{"too few inputs", "dense.ir", `%18 = add(%3, %17)`, `%18 = add(%3)`, "%18 add: 1 inputs, want 2..2"},
		{"too many inputs", "dense.ir", `%10 = linear(%5, %6, %9)`, `%10 = linear(%5, %6, %9, %9)`, "%10 linear: 4 inputs"},
		{"required attr missing", "dense.ir", `{eps=1e-06}`, `{}`, "%5 rmsnorm: attr eps missing"},
		{"attr of wrong type", "dense.ir", `layer=0`, `layer="0"`, "%15 attention: attr layer has type string, want int64"},
		{"input name", "dense.ir", `{name="positions"}`, `{name="pos"}`, "%1 input: input name \"pos\""},
		{"input dtype", "dense.ir", `%0 = input() i32[T]`, `%0 = input() f32[T]`, "%0 input: result f32[T], want i32[T]"},
		{"T not first", "dense.ir", `%12 = linear(%5, %8) f32[T,128]`, `%12 = linear(%5, %8) f32[128,T]`, "%12 linear: shape [128,T]: T only as the first dimension"},
		{"zero dim", "dense.ir", `f32[256] {name="blk.0.attn_q.bias"}`, `f32[0] {name="blk.0.attn_q.bias"}`, "%9 weight: shape [0]"},
		{"weight name", "dense.ir", `{name="blk.0.ffn_norm.weight"}`, `{name=""}`, "%19 weight: empty weight name"},
		{"quant block", "dense.ir", `q6_k[256,512]`, `q6_k[256,384]`, "%23 weight: row length 384 is not a multiple of the q6_k block 256"},
		{"row range count", "fused.ir", `{name="attn_qkv.weight" rows=[64,32]}`, `{name="attn_qkv.weight" rows=[64,16]}`, "%9 weight: rows [64 16]: count 16 ≠ the weight's first dimension 32"},
		{"row range form", "fused.ir", `{name="attn_qkv.bias" rows=[96,32]}`, `{name="attn_qkv.bias" rows=[-1,32]}`, "%13 weight: rows [-1 32], want [first ≥ 0, count ≥ 1]"},
		{"row range of a quant vector", "dense.ir", `f32[256] {name="blk.0.attn_q.bias"}`, `q8_0[256] {name="blk.0.attn_q.bias" rows=[0,256]}`, "%9 weight: rows [0 256] of a q8_0 vector would cut quant blocks"},
		{"weight with T", "dense.ir", `f32[256] {name="output_norm.weight"}`, `f32[T] {name="output_norm.weight"}`, "%30 weight: a weight has no token dimension"},
		{"embed ids", "dense.ir", `embed(%2, %0)`, `embed(%2, %2)`, "%3 embed: ids (%2) is q8_0[256,256], want i32[T]"},
		{"embed result", "dense.ir", `%3 = embed(%2, %0) f32[T,256]`, `%3 = embed(%2, %0) f32[T,128]`, "%3 embed: result f32[T,128], want f32[T,256]"},
		{"add shapes", "dense.ir", `%18 = add(%3, %17)`, `%18 = add(%3, %12)`, "%18 add: operands f32[T,256] and f32[T,128]"},
		{"norm weight width", "dense.ir", `%20 = rmsnorm(%18, %19)`, `%20 = rmsnorm(%18, %11)`, "%20 rmsnorm: norm weight (%11) is f32[T,128], want a float vector [256]"},
		{"norm of a weight", "dense.ir", `%5 = rmsnorm(%3, %4)`, `%5 = rmsnorm(%2, %4)`, "%5 rmsnorm: x (%2) is q8_0[256,256], want an f32 matrix"},
		{"linear in-dim", "dense.ir", `%27 = linear(%26, %23)`, `%27 = linear(%26, %16)`, "%27 linear: weight (%16) in-dim 256 ≠ input cols 512"},
		{"linear bias width", "dense.ir", `%11 = linear(%5, %7)`, `%11 = linear(%5, %7, %9)`, "%11 linear: bias (%9) is f32[256], want a float vector [128]"},
		{"linear out", "dense.ir", `%24 = linear(%20, %21) f32[T,512]`, `%24 = linear(%20, %21) f32[T,256]`, "%24 linear: result f32[T,256], want f32[T,512]"},
		{"rope heads", "dense.ir", `heads=2 mode="neox"`, `heads=4 mode="neox"`, "%14 rope: x cols 128 ≠ heads·head_dim 256"},
		{"rope mode", "dense.ir", `heads=2 mode="neox"`, `heads=2 mode="gptj"`, "%14 rope: attr mode \"gptj\""},
		{"rope rot_dim", "dense.ir", `heads=2 mode="neox" rot_dim=64`, `heads=2 mode="neox" rot_dim=66`, "%14 rope: rot_dim 66"},
		{"rope positions", "dense.ir", `%13 = rope(%10, %1)`, `%13 = rope(%10, %5)`, "%13 rope: positions (%5)"},
		{"attention heads", "dense.ir", `heads=4 kv_heads=2 layer=0`, `heads=4 kv_heads=3 layer=0`, "%15 attention: heads 4 not a multiple of kv_heads 3"},
		{"attention q", "dense.ir", `attention(%13, %14, %12)`, `attention(%14, %14, %12)`, "%15 attention: q cols 128 ≠ heads·head_dim 256"},
		{"attention kv", "dense.ir", `attention(%13, %14, %12)`, `attention(%13, %13, %12)`, "%15 attention: k is [T,256], want [T,128]"},
		{"two writers of one KV cache", "fused.ir", `%39 = layernorm(%38, %4, %5) f32[T,64] {eps=1e-05}`, `%39 = attention(%38, %16, %17) f32[T,64] {head_dim=16 heads=4 kv_heads=2 layer=0 scale=0.25 window=0}`, "%39 attention: layer 0's KV cache is already written by %19"},
		{"attention window", "dense.ir", `window=0`, `window=-1`, "%15 attention: layer 0 and window -1"},
		{"swiglu operands", "dense.ir", `swiglu(%24, %25)`, `swiglu(%24, %20)`, "%26 swiglu: gate [T,512] and up [T,256] differ"},
		{"add_post_rmsnorm post-norm weight", "fused.ir", `%6 = add_layernorm(%3, %3, %4, %5)`, `%6 = add_post_rmsnorm(%3, %3, %2, %4)`, "%6 add_post_rmsnorm: post-norm weight (%2) is f16[100,64], want a float vector [64]"},
		{"add_post_rmsnorm norm weight", "fused.ir", `%6 = add_layernorm(%3, %3, %4, %5)`, `%6 = add_post_rmsnorm(%3, %3, %4, %2)`, "%6 add_post_rmsnorm: norm weight (%2) is f16[100,64], want a float vector [64]"},
		{"swiglu_linear gate activation", "fused.ir", `%27 = swiglu_linear(%23, %26, %26) f32[T,48]`, `%27 = swiglu_linear(%23, %26, %26) f32[T,48] {act="relu"}`, "%27 swiglu_linear: attr act \"relu\", want gelu_tanh (absent: silu)"},
		{"last result", "dense.ir", `%29 = last(%28) f32[1,256]`, `%29 = last(%28) f32[T,256]`, "%29 last: result f32[T,256], want f32[1,256]"},
		{"packed parts sum", "fused.ir", `f32[T,128] {eps=1e-05 parts=[64,64]}
%7`, `f32[T,128] {eps=1e-05 parts=[64,32]}
%7`, "%6 add_layernorm: shape [T,128]: packed parts [64 32] sum to 96 columns"},
		{"view of unpacked", "fused.ir", `%20 = view(%6)`, `%20 = view(%3)`, "%20 view: views %3 (embed), which is not packed"},
		{"view part range", "fused.ir", `%17 = view(%14) f32[T,32] {part=2}`, `%17 = view(%14) f32[T,32] {part=3}`, "%17 view: part 3 out of range of 3 parts"},
		{"view width", "fused.ir", `%16 = view(%14) f32[T,32] {part=1}`, `%16 = view(%14) f32[T,64] {part=1}`, "%16 view: result f32[T,64], want f32[T,32]"},
		{"qkv parts", "fused.ir", `parts=[64,32,32] rope_mode`, `parts=[32,64,32] rope_mode`, "%14 qkv: parts [32 64 32] ≠ projection widths [64 32 32]"},
		{"qkv rope widths", "fused.ir", `heads=4 kv_heads=2 parts=[64,32,32]`, `heads=4 kv_heads=1 parts=[64,32,32]`, "%14 qkv: q, k widths 64, 32 ≠ heads·head_dim 64, kv_heads·head_dim 16"},
		{"qkv positions without rope", "fused.ir", `rope_mode="normal" `, ``, "%14 qkv: 8 inputs"},
		{"qkv positions dtype", "fused.ir", `%13, %1) f32[T,128]`, `%13, %3) f32[T,128]`, "%14 qkv: positions (%3)"},
		{"qkv weight in-dim", "fused.ir", `qkv(%7, %8, %9, %10`, `qkv(%7, %8, %9, %3`, "%14 qkv: wv (%3) is f32[T,64], want a weight matrix"},
		{"sinks width", "fused.ir", `attention(%15, %16, %17, %18)`, `attention(%15, %16, %17, %4)`, "%19 attention: sinks (%4) is f32[64], want a float vector [4]"},
		{"add_rmsnorm operands", "fused.ir", `add_rmsnorm(%20, %19, %21)`, `add_rmsnorm(%20, %16, %21)`, "%22 add_rmsnorm: operands [T,64] and [T,32] differ"},
		{"swiglu_linear packed", "fused.ir", `%25 = swiglu_linear(%23, %24) f32[T,48]`, `%25 = swiglu_linear(%23, %24) f32[T,96]`, "%25 swiglu_linear: result f32[T,96], want f32[T,48]"},
		{"swiglu_linear widths", "fused.ir", `swiglu_linear(%23, %26, %26)`, `swiglu_linear(%23, %26, %24)`, "%27 swiglu_linear: gate out-dim 48 ≠ up out-dim 96"},
		{"moe top_k", "fused.ir", `top_k=2`, `top_k=5`, "%38 moe: top_k 5 > experts 4"},
		{"moe experts", "fused.ir", `experts=4`, `experts=3`, "%38 moe: router_w (%30) is f32[4,64], want [3,64]"},
		{"moe down", "fused.ir", `%33, %34, %35, %36, %37)`, `%33, %34, %35, %34, %37)`, "%38 moe: down_w (%34) is mxfp4[4,32,64], want [4,64,32]"},
		{"layernorm bias", "fused.ir", `layernorm(%38, %4, %5)`, `layernorm(%38, %4, %31)`, "%39 layernorm: norm bias (%31)"},
		{"gelu result", "fused.ir", `%29 = gelu(%28) f32[T,48]`, `%29 = gelu(%28) f16[T,48]`, "%29 gelu: result f16[T,48], want f32[T,48]"},
		{"negative eps", "fused.ir", `%39 = layernorm(%38, %4, %5) f32[T,64] {eps=1e-05}`, `%39 = layernorm(%38, %4, %5) f32[T,64] {eps=-1e-05}`, "%39 layernorm: eps -1e-05 < 0"},
		{"head norm weight", "qknorm.ir", `head_rmsnorm(%12, %9)`, `head_rmsnorm(%12, %5)`, "%15 head_rmsnorm: norm weight (%5) is f16[64,64], want a float vector [16]"},
		{"head norm heads", "qknorm.ir", `{eps=1e-06 head_dim=16 heads=2}`, `{eps=1e-06 head_dim=16 heads=3}`, "%15 head_rmsnorm: x cols 32 ≠ heads·head_dim 48"},
		{"norm_rope positions", "qknorm.ir", `norm_rope(%11, %8, %1)`, `norm_rope(%11, %8, %8)`, "%14 norm_rope: positions (%8)"},
		{"freq_factors length", "qknorm.ir", `freq_factors=[1.0,1.0,2.5,8.0]`, `freq_factors=[1.0,2.5,8.0]`, "%14 norm_rope: 3 freq_factors, want rot_dim/2 = 4"},
		{"freq_factors sign", "qknorm.ir", `freq_factors=[1.0,1.0,2.5,8.0]`, `freq_factors=[1.0,1.0,-2.5,8.0]`, "freq_factors hold -2.5"},
		{"freq_scale", "qknorm.ir", `freq_scale=0.125`, `freq_scale=0.0`, "%16 rope: freq_scale 0"},
		{"geglu operands", "qknorm.ir", `geglu(%20, %21)`, `geglu(%20, %17)`, "%22 geglu: gate [T,48] and up [T,64] differ"},
		{"moe clamp half", "qknorm.ir", `{experts=4 top_k=2}`, `{experts=4 limit=7.0 top_k=2}`, "%27 moe: limit and alpha come together"},
		{"moe without biases down", "qknorm.ir", `%24, %25, %26)`, `%24, %25, %24)`, "%27 moe: down_w (%24) is f16[4,32,48], want [4,48,32]"},
		{"bad attr name", "fused.ir", `{alpha=1.702`, `{x/y=1 alpha=1.702`, "col"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			text := readFixture(t, c.file)
			if !strings.Contains(text, c.old) {
				t.Fatalf("fixture %s lacks %q", c.file, c.old)
			}
			g, err := Parse(strings.Replace(text, c.old, c.new, 1))
			if err == nil {
				err = Verify(g)
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}

// TestVerifyRejectsStructure covers what the text form cannot express.
func TestVerifyRejectsStructure(t *testing.T) {
	build := func() (*Graph, *Node, *Node) {
		g := New()
		g.Attrs["max_tokens"] = int64(4)
		tok := g.Add(OpInput, I32, Shape{T}, map[string]any{"name": "tokens"})
		e := g.Add(OpEmbed, F32, Shape{T, 8}, nil, g.Add(OpWeight, F32, Shape{10, 8}, map[string]any{"name": "e"}), tok)
		g.Outputs = []*Node{e}
		return g, tok, e
	}
	g, _, _ := build()
	if err := Verify(g); err != nil {
		t.Fatalf("base graph: %v", err)
	}
	cases := []struct {
		name   string
		mutate func(g *Graph, tok, e *Node)
		want   string
	}{
		{"duplicate id", func(g *Graph, tok, e *Node) { e.ID = tok.ID }, "id used twice"},
		{"use before def", func(g *Graph, tok, e *Node) { g.Nodes[0], g.Nodes[2] = g.Nodes[2], g.Nodes[0] }, "not defined before this use"},
		{"nil input", func(g *Graph, tok, e *Node) { e.Inputs[1] = nil }, "%2 embed: input 1 is nil"},
		{"foreign output", func(g *Graph, tok, e *Node) { g.Outputs = []*Node{{ID: 9, Op: OpAdd}} }, "output 0 is not a node"},
		{"attr type", func(g *Graph, tok, e *Node) { e.Attrs["x"] = 3 }, "%2 embed: attr x has type int"},
		{"graph attr type", func(g *Graph, tok, e *Node) { g.Attrs["x"] = float32(1) }, "graph x has type float32"},
		{"bad dtype", func(g *Graph, tok, e *Node) { e.DType = None + 1 }, "%2 embed: bad dtype"},
		{"negative id", func(g *Graph, tok, e *Node) { tok.ID = -3 }, "%-3 input: negative id"},
	}
	for _, c := range cases {
		g, tok, e := build()
		c.mutate(g, tok, e)
		if err := Verify(g); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.name, err, c.want)
		}
	}
}

// verifierCase is a node a verifier of attributes takes (want "") or
// refuses with an error containing want.
type verifierCase struct {
	name  string
	op    Op
	attrs map[string]any
	want  string
}

func checkVerifier(t *testing.T, verify func(*Node) error, cases []verifierCase) {
	t.Helper()
	for _, c := range cases {
		err := verify(&Node{Op: c.op, Attrs: c.attrs})
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

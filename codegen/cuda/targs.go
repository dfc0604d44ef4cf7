package cuda

import (
	"fmt"
	"reflect"
	"strconv"

	"github.com/llama-orch/orc/ir"
)

// Each kernel family's template arguments are one struct below whose
// exported fields are the device template's parameters in order
// (templates/*.cu.tmpl); renderTArgs writes them. A field tagged
// `targ:"omitzero"` is a trailing parameter whose default is zero: the
// trailing run of such fields that are zero is left out (one that is zero
// before a non-zero one is written). Embedded structs contribute their
// fields in place.

// renderTArgs writes a family's argument struct as C template arguments:
// a fmt.Stringer as its String, integers in decimal, bools as true/false,
// strings (config struct names) as they are.
func renderTArgs(args any) []string {
	var out []string
	defaulted := 0 // the trailing run of zero omitzero fields in out
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		t := v.Type()
		for i := range t.NumField() {
			f, fv := t.Field(i), v.Field(i)
			if f.Anonymous {
				walk(fv)
				continue
			}
			if !f.IsExported() {
				continue
			}
			out = append(out, renderTArg(fv))
			if f.Tag.Get("targ") == "omitzero" && fv.IsZero() {
				defaulted++
			} else {
				defaulted = 0
			}
		}
	}
	walk(reflect.ValueOf(args))
	return out[:len(out)-defaulted]
}

// gateAct is a gated FFN kernel's GATE parameter, its gate activation's
// struct (common.cu.tmpl); the zero value is the templates' default SiLU.
type gateAct int

const (
	gateSiLU gateAct = iota
	gateGELUTanh
)

func (a gateAct) String() string { return [...]string{"GateSiLU", "GateGELUTanh"}[a] }

// gateOf is swiglu_linear n's gate activation.
func gateOf(n *ir.Node) (gateAct, error) {
	switch n.GateAct() {
	case ir.GateSiLU:
		return gateSiLU, nil
	case ir.GateGELUTanh:
		return gateGELUTanh, nil
	}
	return 0, fmt.Errorf("swiglu_linear: gate activation %q has no kernel", n.GateAct())
}

var stringer = reflect.TypeFor[fmt.Stringer]()

func renderTArg(v reflect.Value) string {
	if v.Type().Implements(stringer) {
		return v.Interface().(fmt.Stringer).String()
	}
	switch v.Kind() {
	case reflect.Int, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	case reflect.String:
		return v.String()
	}
	panic("codegen/cuda: template argument of type " + v.Type().String())
}

// accessor is a weight accessor type (weights.cu.tmpl): W_<dtype><NBLK>,
// W_<dtype>_split<NBLK> for a GPU layout that differs from GGUF order
// (relayout.go's splitLayouts), with _dot for its integer-dot variant
// (q8_dot.cu.tmpl) and ", true" for dot8_q6_k's BOUNDED form. The zero accessor
// is B_none: an absent optional weight (a bias).
type accessor struct {
	dtype   ir.DType
	split   bool
	blocks  int64 // NBLK: the blocks the node reads
	dot     bool
	bounded bool
}

// noWeight is B_none.
var noWeight = accessor{}

func (a accessor) String() string {
	if a.blocks == 0 {
		return "B_none"
	}
	name := "W_" + a.dtype.String()
	if a.split {
		name += "_split"
	}
	if a.dot {
		name += "_dot"
	}
	if a.bounded {
		return fmt.Sprintf("%s<%d, true>", name, a.blocks)
	}
	return fmt.Sprintf("%s<%d>", name, a.blocks)
}

// dotted is a's integer-dot variant.
func (a accessor) dotted() accessor { a.dot = true; return a }

// mmaX is the X template argument of the tensor-core kernels (mma.cu.tmpl):
// XCodes reads x's int16 codes and scales; XNorm<N, W, ADD> folds x's norm
// in (foldedNorm), reading the norm's inputs; XPostNorm<N, PW, W> folds an
// add_post_rmsnorm's two norms and its add.
type mmaX struct {
	folded bool
	norm   string   // the norm's config struct
	w      accessor // its weight
	add    bool     // it adds its two inputs first, writing the sum
	post   bool     // its second input is normed first, by pw (add_post_rmsnorm)
	pw     accessor
}

func (x mmaX) String() string {
	switch {
	case !x.folded:
		return "XCodes"
	case x.post:
		return fmt.Sprintf("XPostNorm<%s, %s, %s>", x.norm, x.pw, x.w)
	}
	return fmt.Sprintf("XNorm<%s, %s, %t>", x.norm, x.w, x.add)
}

// resRead is linear_q8's RES (q8_kernels.cu.tmpl): no residual, the residual read
// after the kernel's wait, or before it (readsBeforeWait).
type resRead int

const (
	resNone resRead = iota
	resAfterWait
	resBeforeWait
)

// resReadOf is RES for a linear_q8 that adds a residual (has) or not;
// the reads its node records to move before the wait (residual_before_wait,
// the chooseEarlyResiduals pass) move in readsBeforeWait.
func resReadOf(has bool) resRead {
	if has {
		return resAfterWait
	}
	return resNone
}

// dotTail are the parameters the integer-path kernels end with
// (rows_dot8's EARLY, the rows and token tile, and the stream's shared
// memory where they stream).
type dotTail struct {
	Early    bool
	Rows, TT int64
	Smem     int64 `targ:"omitzero"`
}

type (
	embedArgs struct {
		W          accessor
		Rows, Cols int64
	}
	rmsNormArgs struct {
		N             string
		W             accessor
		Cols, Threads int64
		Add, Q8       bool
	}
	rmsNormPostArgs struct {
		N             string
		WB, W         accessor
		Cols, Threads int64
		Q8            bool
	}
	layerNormArgs struct {
		N             string
		W, B          accessor
		Cols, Threads int64
		Add, Q8       bool
	}
	normLogitsArgs struct {
		N          string
		W, WR, BR  accessor
		D, Threads int64
		Add        bool
	}
	// rowsColsArgs serve add_ew and gelu_ew.
	rowsColsArgs struct{ Rows, Cols int64 }
	swigluEWArgs struct{ Rows, F, InStride int64 }
	splitEWArgs  struct{ Rows, In, C0, N int64 }
	lastRowArgs  struct {
		Rows, Cols int64
		Q8         bool
	}
	ropeArgs struct {
		R           string
		Rows, Heads int64
	}
	// configArgs serve the kernels whose one argument is their config
	// struct: kv_store, moe_lists, moe_sum.
	configArgs struct{ Cfg string }
	attendArgs struct {
		A         string
		S         accessor
		Sinks, Q8 bool
	}
	// attendDecodeArgs serve attend_decode: its grid's splits, their
	// clusters, each warp's tiles in flight, a split's fewest keys and
	// the q/k norms it folds in.
	attendDecodeArgs struct {
		attendArgs
		Splits, Cluster, Stages, MinKeys int64
		QK                               string `targ:"omitzero"` // QKNorm<...> where it folds the q/k norms, QKStore an 8-bit store
	}
	// pagedArgs serve kv_store_paged; attendPagedArgs attend_paged (NL,
	// the model's layers, places a row in the paged pool).
	pagedArgs struct {
		A  string
		NL int64
	}
	// Splits are the most blocks a query's key tiles are dealt to (the
	// node's paged_splits), Tiles the least key tiles a split takes
	// (paged_split_tiles), Stages its ring's key tiles (paged_stages),
	// Decode says every row of the step is one token (the batched decode
	// schedule).
	attendPagedArgs struct {
		A                     string
		S                     accessor
		Sinks                 bool
		NL                    int64
		Splits, Tiles, Stages int64
		Decode                bool
	}
	gatherArgs     struct{ Cols int64 }
	argmaxArgs     struct{ V int64 }
	gemmXArgs      struct{ In int64 }
	gemmLinearArgs struct {
		W, B                    accessor
		In, Out, BM, BN, Stages int64
		Splits                  int64 `targ:"omitzero"` // the K splits where 2 or more, else 0 (the template's default 1)
	}
	gemmSwiGLUArgs struct {
		WG, WU                        accessor
		In, F, UpRow0, BM, BN, Stages int64
		Splits                        int64   `targ:"omitzero"`
		Gate                          gateAct `targ:"omitzero"` // after Splits: a GELU gate gives Splits at least 1
	}
	gemmQKVArgs struct {
		WQ, WK, WV, BQ, BK, BV         accessor
		In, NQ, NK, NV, BM, BN, Stages int64
		Splits                         int64 `targ:"omitzero"`
	}
	qkvRopeStoreArgs struct {
		R          string
		NQ, NK, NV int64
		KV         bool
	}
	linearGEMVArgs struct {
		W, B    accessor
		In, Out int64
	}
	swigluGEMVArgs struct {
		WG, WU        accessor
		In, F, UpRow0 int64
		Gate          gateAct `targ:"omitzero"`
	}
	qkvGEMVArgs struct {
		WQ, WK, WV, BQ, BK, BV accessor
		R                      string
		In, NQ, NK, NV         int64
		KV                     bool
	}
	linearQ8Args struct {
		W, B       accessor
		In, Out, S int64
		QX, Greedy bool
		Res        resRead
		dotTail
	}
	swigluQ8Args struct {
		W                       accessor
		In, F, UpRow0, S, Warps int64
		Q8                      bool
		dotTail
		Gate gateAct `targ:"omitzero"`
	}
	qkvQ8Args struct {
		WQ, WK, WV, BQ, BK, BV accessor
		R                      string
		In, NQ, NK, NV         int64
		KV                     bool
		S                      int64
		dotTail
	}
	qkvMMAArgs struct {
		X                      mmaX
		WQ, WK, WV, BQ, BK, BV accessor
		R                      string
		In, NQ, NK, NV         int64
		KV                     bool
		NW, UPW                int64
		dotTail
	}
	// linear_mmas (mma_slabs.cu.tmpl): NW warps of UPW super-blocks a slab,
	// Stages stages in Smem bytes.
	linearMMASArgs struct {
		W, B                     accessor
		In, Out, NW, UPW, Stages int64
		QX                       bool
		Res                      resRead
		Rows, TT, Smem           int64
	}
	swigluMMAArgs struct {
		X                      mmaX
		W                      accessor
		In, F, UpRow0, NW, UPW int64
		dotTail
		Gate gateAct `targ:"omitzero"`
	}
	// The mma_tokens kernels' (mma_tokens.cu.tmpl): NW warps, NT n-tiles.
	linearMMATArgs struct {
		W, B                  accessor
		In, Out, NW, NT, Rows int64
	}
	swigluMMATArgs struct {
		swigluMMATShape
		Gate gateAct `targ:"omitzero"`
	}
	swigluMMATShape struct {
		W                           accessor
		In, F, UpRow0, NW, NT, Rows int64
	}
	qkvMMATArgs struct {
		WQ, WK, WV, BQ, BK, BV accessor
		R                      string
		In, NQ, NK, NV         int64
		KV                     bool
		NW, NT, Rows           int64
	}
	// The streamed forms (fn_stream): the one-round kernel's arguments,
	// then the stream's.
	linearMMATStreamArgs struct {
		linearMMATArgs
		mmatStream
	}
	swigluMMATStreamArgs struct {
		swigluMMATShape
		mmatStream
		Gate gateAct `targ:"omitzero"`
	}
	qkvMMATStreamArgs struct {
		qkvMMATArgs
		mmatStream
	}
	// The mma_halves kernels' (mma_halves.cu.tmpl).
	linearMMAHArgs struct {
		W, B    accessor
		In, Out int64
		mmahShape
	}
	swigluMMAHArgs struct {
		W             accessor
		In, F, UpRow0 int64
		mmahShape
	}
	qkvMMAHArgs struct {
		WQ, WK, WV, BQ, BK, BV accessor
		R                      string
		In, NQ, NK, NV         int64
		KV                     bool
		mmahShape
	}
	quantizeArgs struct{ Rows, In int64 }
	// moeRouterArgs serve moe_route and moe_logits.
	moeRouterArgs struct {
		Cfg    string
		WR, BR accessor
	}
	moeExpertArgs struct {
		Cfg     string
		W, B    accessor
		In, Out int64
		Gated   bool
	}
	// moeGEMMArgs serve moe_gate_up_gemm and moe_down_gemm.
	moeGEMMArgs struct {
		Cfg            string
		W, B           accessor
		BM, BN, Stages int64
	}
	// moeMMATArgs serve moe_gate_up_mmat and moe_down_mmat; moeCodesArgs
	// moe_codes.
	moeMMATArgs struct {
		Cfg    string
		W, B   accessor
		NW, NT int64
	}
	moeCodesArgs struct {
		Cfg    string
		W      accessor
		In     int64
		Gather bool
	}
	moeGateUpArgs struct {
		Cfg  string
		W, B accessor
	}
	moeDownArgs struct {
		Cfg       string
		W, B      accessor
		PickEarly bool
		Rows      int64 // rows a row set (moe_down_rows)
		Lanes     int64 `targ:"omitzero"` // lanes a row (moe_down_lanes; 0: 32)
	}
	sampleDrawArgs struct{ V, G, EPT, Slot, Scratch int64 }
	// headnorm.cu.tmpl
	headNormArgs struct {
		N               string
		W               accessor
		Rows, Heads, HD int64
	}
	normRopeArgs struct {
		R, N        string
		W           accessor
		Rows, Heads int64
	}
	gegluArgs struct{ Rows, F int64 }
	scaleArgs struct {
		S          string
		Rows, Cols int64
	}
)

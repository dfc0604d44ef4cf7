// Package plans is the only meeting point of compile time and run time: a
// plan directory holds a manifest (msgpack behind a magic and a version), the
// weight blob in upload order, and for GPU targets the compiled kernels. It
// knows no CUDA: kernel launches are plain records.
package plans

import (
	"fmt"
	"math"
)

// Magic starts manifest.bin.
const Magic = "ORCPLAN\x00"

// FormatVersion changes whenever the manifest or blob layout changes; a plan
// of another version is refused with "recompile with orcc".
const FormatVersion = 4

// File names inside a plan directory.
const (
	ManifestFile = "manifest.bin"
	WeightsFile  = "weights.bin"
	KernelsFile  = "kernels.fatbin"
	SourceFile   = "kernels.cu" // kept for reading and debugging; not loaded
)

// WeightChunkBytes is the span each entry of Manifest.WeightChunks hashes.
const WeightChunkBytes = 64 << 20

// Alignment of every tensor in weights.bin and every arena offset.
const Alignment = 256

// Manifest describes a plan completely.
type Manifest struct {
	FormatVersion   int    `msgpack:"format_version"`
	CompilerVersion string `msgpack:"compiler_version"`
	Target          string `msgpack:"target"` // "cpu" or a CUDA arch like "sm_90"
	CreatedAt       string `msgpack:"created_at"`

	Model     Model             `msgpack:"model"`
	Tokenizer []byte            `msgpack:"tokenizer"` // tokenizer.Spec, msgpack-encoded
	Graph     string            `msgpack:"graph"`     // IR text after the pipeline
	Tensors   []Tensor          `msgpack:"tensors"`   // weights.bin table, upload order
	Memory    Memory            `msgpack:"memory"`    // the VRAM plan
	Kernels   *Kernels          `msgpack:"kernels,omitempty"`
	Files     map[string]string `msgpack:"files"` // file name → hex sha256
	// WeightChunks are the BLAKE3-256 of each WeightChunkBytes span of
	// weights.bin (hash.go says why not SHA-256), so a load verifies the
	// blob on every core at once.
	WeightChunks []string `msgpack:"weight_chunks"`
}

// Model holds the facts a server reports and a runtime sizes buffers by.
type Model struct {
	Name          string `msgpack:"name"`
	Arch          string `msgpack:"arch"`
	FileType      string `msgpack:"file_type"` // e.g. "Q4_K_M"
	Params        int64  `msgpack:"params"`
	NLayer        int    `msgpack:"n_layer"`
	NEmbd         int    `msgpack:"n_embd"`
	NHead         int    `msgpack:"n_head"`
	NHeadKV       int    `msgpack:"n_head_kv"`
	HeadDim       int    `msgpack:"head_dim"`
	Vocab         int    `msgpack:"vocab"`
	ContextLength int    `msgpack:"context_length"`
	// Sliding window per layer (0 = full attention); nil when none.
	Windows []int `msgpack:"windows"`
	// KVCache is how a cached key or value row is stored: "" fp16,
	// KVCacheQ8 int8 codes with a scale per kv head (KVRowBytes).
	KVCache string `msgpack:"kv_cache,omitempty" json:",omitempty"`
}

// KVCacheQ8 is the 8-bit KV cache: a position's row of one layer's K (or
// V) is its n_head_kv·head_dim int8 codes, then one f32 scale per kv head
// (its largest |x| over 127: x ≈ code·scale), padded to 16 bytes.
const KVCacheQ8 = "q8"

// KVRowBytes is one position's row of one layer's K or V in the cache and
// the pool: n_head_kv·head_dim fp16, or KVCacheQ8's codes and scales.
func (m *Model) KVRowBytes() int64 {
	kv := int64(m.NHeadKV) * int64(m.HeadDim)
	if m.KVCache == KVCacheQ8 {
		return (kv + 4*int64(m.NHeadKV) + 15) / 16 * 16
	}
	return 2 * kv
}

// KVQ8Round stores src's heads of hd values into dst as KVCacheQ8 keeps
// them, dequantized: each head's codes rint(x·(127/amax)), amax its
// largest |x|, times its scale amax/127, in float32 as the GPU kernels
// compute them (the CPU device's cache, the GPU tests' references).
func KVQ8Round(dst, src []float32, hd int) {
	for h := 0; h+hd <= len(src); h += hd {
		amax := float32(0)
		for _, x := range src[h : h+hd] {
			amax = max(amax, float32(math.Abs(float64(x))))
		}
		if amax == 0 {
			clear(dst[h : h+hd])
			continue
		}
		sc, inv := amax/127, 127/amax
		for i, x := range src[h : h+hd] {
			c := max(-127, min(127, math.RoundToEven(float64(x*inv))))
			dst[h+i] = float32(c) * sc
		}
	}
}

// KVBytes is a sequence's cache of ctx positions: [n_layer][K, V][ctx] rows.
func (m *Model) KVBytes(ctx int) int64 { return int64(m.NLayer) * 2 * int64(ctx) * m.KVRowBytes() }

// Tensor is one weight in weights.bin.
type Tensor struct {
	Name   string  `msgpack:"name"`
	DType  string  `msgpack:"dtype"`  // ir dtype name
	Shape  []int64 `msgpack:"shape"`  // ir order (row-major)
	Layout string  `msgpack:"layout"` // "" = GGUF block order; else a layout pass's name
	Offset int64   `msgpack:"offset"` // in weights.bin, Alignment-aligned
	Bytes  int64   `msgpack:"bytes"`
	// Segments are the row counts (of the first dimension) of consecutive
	// row ranges that Layout arranges each on its own, as if each were a
	// tensor, so a graph's row-range weight (ir weight rows=[first, count])
	// is one contiguous span in that layout too. Empty: one range.
	Segments []int64 `msgpack:"segments,omitempty" json:",omitempty"`
}

// Memory is the activation arena and KV-cache plan.
type Memory struct {
	MaxTokens       int   `msgpack:"max_tokens"`         // largest T a step may have (prefill chunk)
	ArenaBytes      int64 `msgpack:"arena_bytes"`        // activation arena at MaxTokens
	KVBytesPerToken int64 `msgpack:"kv_bytes_per_token"` // all layers, K and V (Model.KVBytes(1))
	WeightBytes     int64 `msgpack:"weight_bytes"`
}

// Kernels is the GPU part: the module and the launch schedules.
type Kernels struct {
	Arch    string   `msgpack:"arch"`
	Prefill []Launch `msgpack:"prefill"`
	Decode  []Launch `msgpack:"decode"`
	// State is the step-state block's layout; the runtime fills it before
	// every step (a tiny host-to-device copy), so a captured decode graph
	// never changes.
	State State `msgpack:"state"`
	// Logits is the arena offset of the step's result, f32 [vocab]: the
	// logits of the step's last token.
	Logits int64 `msgpack:"logits"`
	// Sampler samples the logits on the GPU; nil in plans made before it,
	// which the runtime samples on the host.
	Sampler *Sampler `msgpack:"sampler,omitempty"`
	// GridDepWait says every kernel waits for the grid before it on the
	// stream (griddepcontrol.wait) before it touches global memory, so the
	// runtime may let each start while that grid finishes (programmatic
	// dependent launch, sm_90 and newer).
	GridDepWait bool `msgpack:"grid_dep_wait,omitempty"`

	// Batch is the batched step over a paged KV pool (continuous
	// batching), launched in plain stream order: Batch per token of the
	// step (T = all its rows' tokens), then BatchRows per row (T = its
	// rows: each row's last token gathered, the final layers and the LM
	// head, the greedy picks). Both empty: the plan cannot batch.
	Batch     []Launch `msgpack:"batch,omitempty"`
	BatchRows []Launch `msgpack:"batch_rows,omitempty"`
	// BatchDecode replaces Batch in a step of decode tokens alone (every
	// row one token, T = its rows) of at most BatchDecodeMaxRows rows: the
	// same values, by kernels that read each weight once for several
	// tokens. Empty: Batch serves every step.
	BatchDecode        []Launch `msgpack:"batch_decode,omitempty"`
	BatchDecodeMaxRows int      `msgpack:"batch_decode_max_rows,omitempty"`
	// BatchFew replaces Batch in any other step of at most
	// BatchDecodeMaxRows tokens (decode tokens beside short prefill
	// chunks): BatchDecode's kernels, but attention by tiles of a row's
	// tokens, as Batch's. Empty: Batch serves those steps.
	BatchFew []Launch `msgpack:"batch_few,omitempty"`
	// BatchMaxRows is the most rows (sequences) one batched step takes.
	BatchMaxRows int `msgpack:"batch_max_rows,omitempty"`
	// BatchBytes is the batch region (ArgBatch) the runtime allocates
	// beside the pool: the per-row activations of BatchRows.
	BatchBytes int64 `msgpack:"batch_bytes,omitempty"`
	// BatchLogits is where in the batch region the step's logits lie, f32
	// [rows][vocab]: row i's last token's.
	BatchLogits int64 `msgpack:"batch_logits,omitempty"`
}

// State gives byte offsets inside the step-state block, which codegen lays
// out and the runtime writes (little-endian int32 fields, but Greedy).
type State struct {
	Bytes     int64 `msgpack:"bytes"`     // size of the block
	T         int64 `msgpack:"t"`         // int32: tokens in this step
	Pos0      int64 `msgpack:"pos0"`      // int32: absolute position of the first
	Ctx       int64 `msgpack:"ctx"`       // int32: the sequence's KV capacity in tokens
	Tokens    int64 `msgpack:"tokens"`    // int32 [MaxTokens]: token ids
	Positions int64 `msgpack:"positions"` // int32 [MaxTokens]: pos0+i
	// Greedy, when not 0, is where the step's picks lie: a u64 greedy key
	// (the largest finite logit's ordered bits, then 0xFFFFFFFF − its id:
	// the lowest id wins a tie), an int32 that is non-zero if a logit was
	// not finite, at +16 a u64 draw key (the same layout over the drawn
	// value, runtime/sample's z) and at +24 the greedy key over the logits
	// no penalty touches. The LM head fills the greedy key, the draw key
	// when the step's settings ask it to (a plain draw), and the last for
	// another draw with penalties but the sampler's top-k path (top-k up
	// to 64, which reads no key of the head); the sampler fills the draw
	// key. The
	// runtime zeroes the 32 bytes with the block before every step.
	Greedy int64 `msgpack:"greedy,omitempty"`
	// HeadPicks says the decode step's LM head fills the greedy key, and
	// the draw key when asked: a greedy step or a plain draw then needs no
	// sampler launch.
	HeadPicks bool `msgpack:"head_picks,omitempty"`
	// Sample is where the step's draw settings lie (SampleStep's layout),
	// which the runtime writes before every step.
	Sample int64 `msgpack:"sample"`

	// The batched step's fields (Kernels.Batch), past Bytes: a batch has
	// its own state block, the fields above (T the step's tokens) and
	// these, then its block tables.
	// RowOf: int32 [MaxTokens], each token's row.
	RowOf int64 `msgpack:"row_of,omitempty"`
	// LastTokens: int32 [BatchMaxRows], each row's last token's index.
	LastTokens int64 `msgpack:"last_tokens,omitempty"`
	// Rows: a 16-byte header {rows, 0, 0, 0} that BatchRows' launches
	// read as their state: their T is the row count.
	Rows int64 `msgpack:"rows,omitempty"`
	// Paging: int32 block tokens, int32 table stride (blocks a row's table
	// holds).
	Paging int64 `msgpack:"paging,omitempty"`
	// Picks: int32 [BatchMaxRows][2], each row's greedy id (the largest
	// logit, the lowest id on a tie) and a flag, non-zero where a logit is
	// not finite; BatchRows' last launch writes them.
	Picks int64 `msgpack:"picks,omitempty"`
	// Tables: int32 [rows][stride], each row's block table; the batch's
	// state block ends after rows·stride of them, a size the runtime
	// chooses.
	Tables int64 `msgpack:"tables,omitempty"`
}

// Launch is one kernel launch. Grid dimensions are GridA·T+GridB (ceil-divided
// by GridDiv when it is non-zero), so one record serves every T; where
// Splits is set, grid z is instead the splits the step's queries take.
type Launch struct {
	Kernel  string     `msgpack:"kernel"`
	GridA   [3]int64   `msgpack:"grid_a"`
	GridB   [3]int64   `msgpack:"grid_b"`
	GridDiv [3]int64   `msgpack:"grid_div"`
	Block   [3]int     `msgpack:"block"`
	Smem    int        `msgpack:"smem"`
	Args    []Arg      `msgpack:"args"`
	Splits  *SplitRule `msgpack:"splits,omitempty" json:",omitempty"`
}

// SplitRule is a batched step's attention (attend_paged) dealing each
// query's key tiles, of KeyTile keys, to PagedSplits(n, Most, Tiles)
// blocks where it sees n of them: the launch's grid z is the most any
// query of the step takes (its blocks past a query's count exit), Most
// for a windowed layer (whose Most the window already bounds). Most and
// Tiles are powers of two, so the count depends only on n's highest bit.
type SplitRule struct {
	Most     int64 `msgpack:"most"`
	Tiles    int64 `msgpack:"tiles"`
	KeyTile  int64 `msgpack:"key_tile"`
	Windowed bool  `msgpack:"windowed,omitempty"`
}

// PagedSplits is the splits of a query that sees keys in n key tiles under
// a rule of at most most splits of at least tiles key tiles: the largest
// power of two at most n/tiles, 1 to most. The compiler's ir.PagedSplits,
// which the kernels' counts follow; plans imports nothing of this module,
// so a codegen test holds the two equal.
func PagedSplits(n, most, tiles int64) int64 {
	z := int64(1)
	for z*2 <= most && z*2*tiles <= n {
		z *= 2
	}
	return z
}

// Check reports a rule the runtime cannot size grids by.
func (r *SplitRule) Check() error {
	pow2 := func(v int64) bool { return v >= 1 && v&(v-1) == 0 }
	if !pow2(r.Most) || !pow2(r.Tiles) || r.KeyTile < 1 {
		return fmt.Errorf("split rule most %d, tiles %d, key tile %d: want powers of two and a key tile", r.Most, r.Tiles, r.KeyTile)
	}
	return nil
}

// Of is the most splits a query of a step takes whose queries see at most
// keys keys (the last position of the step's longest row, plus one; 0:
// unknown, the rule's most).
func (r *SplitRule) Of(keys int64) int64 {
	if r.Windowed || keys <= 0 {
		return r.Most
	}
	return PagedSplits((keys+r.KeyTile-1)/r.KeyTile, r.Most, r.Tiles)
}

// Arg kinds of a launch.
const (
	ArgWeight = "weight" // Offset into the weight region
	ArgArena  = "arena"  // Offset into the activation arena
	// ArgKV: the KV cache of a sequence of capacity ctx is laid out
	// [n_layer][2 (K, V)][ctx][n_head_kv*head_dim] fp16; Offset is a base
	// at ctx = 1 ((layer*2+part)*n_head_kv*head_dim*2) that the runtime
	// multiplies by ctx, so one plan serves every --ctx.
	ArgKV    = "kv"
	ArgState = "state" // Offset into the step-state block (T, pos0, sampling params)
	// ArgKVPool: the base of a batch's paged KV pool (Offset 0): block b
	// holds, per layer l and part p (K, V), BT positions of
	// n_head_kv*head_dim fp16 at ((b·n_layer + l)·2 + p)·BT·n_head_kv·head_dim.
	ArgKVPool = "kvpool"
	ArgBatch  = "batch" // Offset into a batch's region (Kernels.BatchBytes)
	ArgInt    = "int"   // immediate int64 Value
)

// Arg is one kernel argument: a pointer into a region, or an immediate.
type Arg struct {
	Kind   string `msgpack:"kind"`
	Offset int64  `msgpack:"offset"`
	Value  int64  `msgpack:"value"`
}

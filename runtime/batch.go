package runtime

import (
	"context"
	"errors"

	"github.com/llama-orch/orc/runtime/sample"
)

// BatchDevice is a Device that also runs one step for several sequences at
// once over a paged KV cache (continuous batching). The server drives it
// with --slots above 1; the sequences' block tables come from
// runtime/kvcache, which the device never sees: it reads and writes the
// blocks a step names.
type BatchDevice interface {
	Device
	// NewBatch allocates the paged KV pool and whatever a batched step
	// needs (activations for cfg.StepTokens rows, per-bucket graphs). It
	// fails with an error wrapping ErrOutOfMemory when the pool does not
	// fit; nothing stays allocated then. One Batch at a time per device.
	NewBatch(cfg BatchConfig) (Batch, error)
}

// BatchConfig sizes a Batch.
type BatchConfig struct {
	// Sequences is the most rows one step takes (the server's slots).
	Sequences int
	// StepTokens is the most tokens one step takes over all its rows:
	// every decoding row's token and the prefill chunks.
	StepTokens int
	// BlockTokens is the positions one KV block holds.
	BlockTokens int
	// KVBytes is the pool's size in bytes; 0 takes the device's default
	// (the CPU: Sequences full contexts; a GPU: the memory left after the
	// weights and the step's activations, less a margin, and after the solo
	// sequence's cache).
	KVBytes int64
	// Solo asks for a SoloBatch: beside the pool, one single sequence of
	// the device's context that a sequence alone in the batch runs on. A
	// device that cannot ignores it.
	Solo bool
}

// Batch is a device's paged KV pool and its batched step.
type Batch interface {
	// Blocks is how many KV blocks of BlockTokens positions the pool holds:
	// block ids in BatchRow.Blocks are below it.
	Blocks() int
	// KVBytesPerBlock is what one block takes on the device.
	KVBytesPerBlock() int64
	// Step runs every row's tokens in one forward pass: each row's tokens
	// are stored at positions Pos, Pos+1, … of its own blocks and attend to
	// that sequence's positions up to their own. It returns the logits of
	// each row's last token, row i at [i·vocab, (i+1)·vocab), valid until
	// the next Step. A row's logits do not depend on the other rows of the
	// step (CPU: bit for bit; GPU: within the kernels' tolerance).
	Step(ctx context.Context, rows []BatchRow) ([]float32, error)
	// Close frees the pool.
	Close() error
}

// BatchRow is one sequence's part of a step.
type BatchRow struct {
	Tokens []int32 // a prefill chunk, or the one token a decode step feeds
	Pos    int     // position of Tokens[0]: how many positions the sequence's cache holds already
	// Blocks is the sequence's block table: block Blocks[i] holds positions
	// [i·BlockTokens, (i+1)·BlockTokens); it covers Pos+len(Tokens).
	Blocks []int32
}

// ErrBatchRows is wrapped by a Step whose rows break BatchConfig's limits or
// name blocks outside the pool.
var ErrBatchRows = errors.New("batched step outside the batch's limits")

// BatchPicker is a Batch that also takes each row's greedy pick where it
// computes the logits: a step whose sampled rows are all greedy then
// returns one id per row instead of rows × vocab logits.
type BatchPicker interface {
	Batch
	// StepGreedy runs Step's forward pass and returns each row's greedy
	// id: the largest logit's, the lowest id on a tie, by the rule of
	// runtime/sample's greedy step (a row whose logits are not all finite
	// included).
	StepGreedy(ctx context.Context, rows []BatchRow) ([]int32, error)
}

// SoloBatch is a Batch with a single sequence beside its pool
// (BatchConfig.Solo), so that a sequence alone in flight runs the device's
// single-sequence step (its decode graph and its sampler on a GPU) instead
// of the batched step, its keys and values moved between its pool blocks
// and the solo sequence's own cache where the two paths meet. The solo
// sequence's logits are the batched step's for the same positions (CPU:
// bit for bit; GPU: within the kernels' tolerance).
type SoloBatch interface {
	Batch
	// Solo is the single sequence; the batch owns it (Close frees it).
	// Its Pos is how many positions its cache holds.
	Solo() Sequence
	// LoadSolo copies positions [from, to) of the sequence whose block
	// table is blocks from the pool into the solo sequence's cache, which
	// must hold [0, from) already (from ≤ Solo().Pos()); its Pos is then
	// to.
	LoadSolo(blocks []int32, from, to int) error
	// StoreSolo copies positions [from, to) of the solo sequence's cache
	// (to ≤ Solo().Pos()) into blocks.
	StoreSolo(blocks []int32, from, to int) error
}

// BatchSampler is a Batch that also draws each row's token where it
// computes the logits: a GPU's sampler draws over each row's logits as it
// does for a sequence's step (runtime.SamplingSequence), so that no row's
// logits come to the host.
type BatchSampler interface {
	Batch
	// StepSample runs Step's forward pass and returns each row's token:
	// the one draws[i].Sampler.Sample returns for row i's logits with
	// draws[i].Recent at the position after the row's tokens; -1 for a row
	// whose Sampler is nil (a prompt chunk whose logits nobody reads). The
	// ids are valid until the next step.
	StepSample(ctx context.Context, rows []BatchRow, draws []BatchDraw) ([]int32, error)
}

// BatchDraw is how one row of a step draws its token.
type BatchDraw struct {
	Sampler *sample.Sampler
	Recent  []int32 // the latest tokens, for the penalties
}

package cuda

import (
	"errors"
	"strings"
	"testing"

	"github.com/llama-orch/orc/plans"
	"github.com/llama-orch/orc/runtime"
)

// withToyBatch gives toy plan p a batched step of two rows for NewBatch to
// size (its launches are the toy's; no test here steps it).
func withToyBatch(p *plans.Plan, vocab int) {
	k := p.Manifest.Kernels
	k.Batch, k.BatchRows, k.BatchMaxRows = k.Prefill, k.Prefill[2:], 2
	k.BatchBytes = 4 * 2 * int64(vocab)
	st := &k.State
	st.Rows = st.Bytes
	st.Paging, st.RowOf = st.Rows+16, st.Rows+32
	st.LastTokens = st.RowOf + 4*int64(p.Manifest.Memory.MaxTokens)
	st.Picks = st.LastTokens + 8
	st.Tables = st.Picks + 16
}

// NewBatch: a plan without a batched step is refused naming the fix; a
// pool that does not fit fails with ErrOutOfMemory and leaves nothing
// allocated; the default pool takes the free VRAM but batchMargin; one
// batch at a time, within the plan's rows; Close gives it all back.
func TestGPUNewBatch(t *testing.T) {
	if !gpuTests() {
		t.Skip("set ORC_GPU_TESTS=1 on a GPU host")
	}
	c := toy{vocab: 100, dim: 8, maxTokens: 4, ctx: 16}
	cfg := runtime.BatchConfig{Sequences: 2, StepTokens: 4, BlockTokens: 4}
	old, err := Open(c.write(t), 0, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.NewBatch(cfg); err == nil || !strings.Contains(err.Error(), "has no batched step: recompile it") {
		t.Errorf("a plan without a batched step: %v", err)
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	p := c.write(t)
	withToyBatch(p, c.vocab)
	d, err := Open(p, 0, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	free := func() int64 {
		f, _, err := d.MemInfo()
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	free0 := free()
	huge := cfg
	huge.KVBytes = 1 << 50
	if _, err := d.NewBatch(huge); !errors.Is(err, runtime.ErrOutOfMemory) {
		t.Fatalf("a pool of 2^50 bytes: %v", err)
	}
	if drop := free0 - free(); drop > 64<<20 {
		t.Fatalf("free memory dropped by %d bytes after a refused NewBatch", drop)
	}
	tooMany := cfg
	tooMany.Sequences = 3
	if _, err := d.NewBatch(tooMany); err == nil || !strings.Contains(err.Error(), "need 1 to 2 sequences") {
		t.Errorf("3 rows of a plan's 2: %v", err)
	}
	b, err := d.NewBatch(cfg)
	if err != nil {
		t.Fatal(err)
	}
	perBlock := kvBytes(&p.Manifest.Model, cfg.BlockTokens)
	left := free()
	t.Logf("default pool: %d blocks of %d bytes, %d bytes left free", b.Blocks(), b.KVBytesPerBlock(), left)
	if b.KVBytesPerBlock() != perBlock || left < batchMargin/2 || left > batchMargin+256<<20 {
		t.Errorf("the default pool leaves %d bytes free (margin %d), blocks of %d bytes", left, batchMargin, b.KVBytesPerBlock())
	}
	if _, err := d.NewBatch(cfg); err == nil || !strings.Contains(err.Error(), "has a batch open") {
		t.Errorf("a second batch: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if drop := free0 - free(); drop > 64<<20 {
		t.Fatalf("free memory dropped by %d bytes after Close", drop)
	}
	small := cfg
	small.KVBytes = 10 * perBlock
	b, err = d.NewBatch(small)
	if err != nil {
		t.Fatal(err)
	}
	if b.Blocks() != 9 { // one reserved for decodeBucket's padding
		t.Errorf("a pool of 10 blocks gives %d to the sequences, want 9", b.Blocks())
	}
}

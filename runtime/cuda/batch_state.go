package cuda

import (
	"encoding/binary"
	"fmt"

	"github.com/llama-orch/orc/plans"
	"github.com/llama-orch/orc/runtime"
)

// batchLimits are what a batched step's rows are checked against.
type batchLimits struct {
	rows, tokens int // a step's rows and tokens at most
	blockTokens  int
	stride       int // blocks a row's table holds: the context's
	blocks       int // the pool's, less the reserved one (decodeBucket's padding)
	ctx, vocab   int
}

// stride is the blocks a table of a ctx-token sequence holds.
func tableStride(ctx, blockTokens int) int { return (ctx + blockTokens - 1) / blockTokens }

// batchStateBytes is a batch's state block: the plan's fields and tables
// of rows rows.
func batchStateBytes(st *plans.State, rows, stride int) int64 {
	return st.Tables + 4*int64(rows)*int64(stride)
}

// decodeBucket is the rows a decode-only step of n rows runs as, its
// graph's: the next power of two, at most the batch's rows.
func decodeBucket(n, rows int) int {
	b := 1
	for b < n {
		b *= 2
	}
	return min(b, rows)
}

// writeBatchState checks rows against l and lays the step out in the host
// image b of the batch's state block (plans.State's batch fields): T and
// each token's id, position and row, each row's last token, the rows
// header, the paging fields and each row's table; then pad rows of one
// token (id 0 at position 0) in the pool's reserved block, l.blocks, which
// no sequence owns (a graph's bucket filled). It returns the step's tokens
// and how many bytes of b the device needs (the tables of its rows end it).
func writeBatchState(b []byte, st *plans.State, l *batchLimits, rows []runtime.BatchRow, pad int) (tokens int, n int64, err error) {
	if len(rows) == 0 || len(rows) > l.rows {
		return 0, 0, fmt.Errorf("cuda: a step of %d rows; the batch takes 1 to %d: %w", len(rows), l.rows, runtime.ErrBatchRows)
	}
	for _, r := range rows {
		tokens += len(r.Tokens)
	}
	if tokens > l.tokens {
		return 0, 0, fmt.Errorf("cuda: a step of %d tokens; the batch takes %d: %w", tokens, l.tokens, runtime.ErrBatchRows)
	}
	le := binary.LittleEndian
	put := func(off int64, v int) { le.PutUint32(b[off:], uint32(v)) }
	bt := l.blockTokens
	t := 0
	for i, r := range rows {
		end := r.Pos + len(r.Tokens)
		switch {
		case len(r.Tokens) == 0:
			return 0, 0, fmt.Errorf("cuda: row %d has no tokens: %w", i, runtime.ErrBatchRows)
		case r.Pos < 0 || end > len(r.Blocks)*bt:
			return 0, 0, fmt.Errorf("cuda: row %d puts %d tokens at position %d, its %d blocks hold %d: %w", i, len(r.Tokens), r.Pos, len(r.Blocks), len(r.Blocks)*bt, runtime.ErrBatchRows)
		case end > l.ctx:
			return 0, 0, fmt.Errorf("cuda: row %d: %d tokens at position %d pass the context of %d: %w", i, len(r.Tokens), r.Pos, l.ctx, runtime.ErrContextFull)
		}
		used := (end + bt - 1) / bt // ≤ stride, as end ≤ ctx
		table := st.Tables + 4*int64(i)*int64(l.stride)
		for j, blk := range r.Blocks[:used] {
			if blk < 0 || int(blk) >= l.blocks {
				return 0, 0, fmt.Errorf("cuda: row %d names block %d; the pool holds %d: %w", i, blk, l.blocks, runtime.ErrBatchRows)
			}
			put(table+4*int64(j), int(blk))
		}
		for j, id := range r.Tokens {
			if id < 0 || int(id) >= l.vocab {
				return 0, 0, fmt.Errorf("cuda: token id %d is outside the vocabulary of %d", id, l.vocab)
			}
			put(st.Tokens+4*int64(t), int(id))
			put(st.Positions+4*int64(t), r.Pos+j)
			put(st.RowOf+4*int64(t), i)
			t++
		}
		put(st.LastTokens+4*int64(i), t-1)
	}
	if len(rows)+pad > l.rows || tokens+pad > l.tokens {
		return 0, 0, fmt.Errorf("cuda: %d rows of %d tokens padded with %d rows pass the batch's %d rows of %d tokens", len(rows), tokens, pad, l.rows, l.tokens)
	}
	for i := len(rows); i < len(rows)+pad; i++ {
		put(st.Tables+4*int64(i)*int64(l.stride), l.blocks)
		put(st.Tokens+4*int64(t), 0)
		put(st.Positions+4*int64(t), 0)
		put(st.RowOf+4*int64(t), i)
		put(st.LastTokens+4*int64(i), t)
		t++
	}
	put(st.T, t)
	put(st.Pos0, 0)
	put(st.Ctx, l.ctx)
	clear(b[st.Rows : st.Rows+16])
	put(st.Rows, len(rows)+pad)
	put(st.Paging, bt)
	put(st.Paging+4, l.stride)
	return t, batchStateBytes(st, len(rows)+pad, l.stride), nil
}

package kvcache

import (
	"fmt"
	"slices"
)

// Table is one sequence's block table: block Blocks()[i] holds its
// positions [i·BlockTokens, (i+1)·BlockTokens). Make one per slot with
// NewTable and reuse it: Acquire fills it, Release empties it.
type Table struct {
	blocks []int32
	// The leading registered blocks (taken from the cache or registered by
	// Commit) and the chain hash through them.
	registered int
	hash       uint64
	// broken: a block's hash was already registered for another block, so
	// this table registers no later block (its chain would not link).
	broken bool
}

// NewTable makes a table for sequences of up to maxBlocks blocks.
func NewTable(maxBlocks int) *Table {
	return &Table{blocks: make([]int32, 0, maxBlocks), hash: chainSeed}
}

// Blocks is the block table, valid until Release.
func (t *Table) Blocks() []int32 { return t.blocks }

// Positions is how many positions the table's blocks hold.
func (p *Pool) Positions(t *Table) int { return len(t.blocks) * p.blockTokens }

// Acquire fills the empty table t with blocks for positions positions of a
// sequence whose prompt is prompt: first the cached blocks that hold the
// prompt's leading tokens (shared, read-only; at least the prompt's last
// token is left to compute, for its logits), then fresh blocks. It returns
// how many leading prompt positions the cached blocks hold. When the pool
// cannot give the blocks now it returns ErrNoBlocks and changes nothing;
// when it never could, ErrTooLarge.
func (p *Pool) Acquire(t *Table, prompt []int32, positions int) (cached int, err error) {
	need := p.BlocksFor(positions)
	switch {
	case len(t.blocks) != 0:
		return 0, fmt.Errorf("kvcache: Acquire on a table that holds %d blocks", len(t.blocks))
	case positions < len(prompt) || len(prompt) == 0:
		return 0, fmt.Errorf("kvcache: %d positions for a prompt of %d tokens", positions, len(prompt))
	case need > len(p.refs):
		return 0, fmt.Errorf("kvcache: %d positions need %d blocks of %d tokens, the pool holds %d: %w", positions, need, p.blockTokens, len(p.refs), ErrTooLarge)
	case need > cap(t.blocks):
		return 0, fmt.Errorf("kvcache: %d positions need %d blocks, the table holds %d", positions, need, cap(t.blocks))
	}
	// Find the cached prefix without taking it yet.
	bt := p.blockTokens
	h, prev := chainSeed, int32(none)
	matchedIdle := 0 // of the matched blocks, those nobody holds (they leave the evictable set)
	for i := range min((len(prompt)-1)/bt, need) {
		chunk := prompt[i*bt : (i+1)*bt]
		next := chain(h, chunk)
		b, ok := p.index[next]
		if !ok || p.parent[b] != prev || !slices.Equal(p.tokens[int(b)*bt:(int(b)+1)*bt], chunk) {
			break
		}
		t.blocks = append(t.blocks, b)
		if p.refs[b] == 0 {
			matchedIdle++
		}
		h, prev = next, b
	}
	matched := len(t.blocks)
	if need-matched > len(p.free)+p.cachedFree-matchedIdle {
		t.blocks = t.blocks[:0]
		return 0, ErrNoBlocks
	}
	for _, b := range t.blocks {
		if p.refs[b] == 0 {
			p.unlink(b)
		}
		p.refs[b]++
	}
	for range need - matched {
		b := p.take()
		p.refs[b] = 1
		t.blocks = append(t.blocks, b)
	}
	t.registered, t.hash, t.broken = matched, h, false
	p.queries += uint64(len(prompt))
	p.hits += uint64(matched * bt)
	return matched * bt, nil
}

// take pops a free block, or evicts the cached block released longest ago.
// Acquire has checked there is one.
func (p *Pool) take() int32 {
	if n := len(p.free); n > 0 {
		b := p.free[n-1]
		p.free = p.free[:n-1]
		return b
	}
	b := p.head
	p.unlink(b)
	delete(p.index, p.hash[b])
	p.registered[b] = false
	return b
}

// Commit registers t's blocks that are full: tokens are the sequence's
// tokens from position 0, written how many of them have their keys and
// values in the cache. From then on a prompt starting with those tokens
// reuses the blocks.
func (p *Pool) Commit(t *Table, tokens []int32, written int) {
	bt := p.blockTokens
	written = min(written, len(tokens))
	for i := t.registered; !t.broken && i < len(t.blocks) && (i+1)*bt <= written; i++ {
		chunk := tokens[i*bt : (i+1)*bt]
		h := chain(t.hash, chunk)
		if _, taken := p.index[h]; taken {
			// The same prefix computed by another sequence meanwhile: keep
			// ours private; the cached one serves later prompts.
			t.broken = true
			return
		}
		b := t.blocks[i]
		parent := int32(none)
		if i > 0 {
			parent = t.blocks[i-1]
		}
		p.registered[b], p.hash[b], p.parent[b] = true, h, parent
		copy(p.tokens[int(b)*bt:(int(b)+1)*bt], chunk)
		p.index[h] = b
		t.registered, t.hash = i+1, h
	}
}

// Release gives t's blocks back and empties it. A registered block nobody
// holds any more stays cached, the table's last blocks first in line for
// eviction (a chain is useless without its first blocks).
func (p *Pool) Release(t *Table) {
	for i := len(t.blocks) - 1; i >= 0; i-- {
		b := t.blocks[i]
		if p.refs[b]--; p.refs[b] > 0 {
			continue
		}
		if p.registered[b] {
			p.pushLRU(b)
		} else {
			p.free = append(p.free, b)
		}
	}
	t.blocks = t.blocks[:0]
	t.registered, t.hash, t.broken = 0, chainSeed, false
}

func (p *Pool) pushLRU(b int32) {
	p.prev[b], p.next[b] = p.tail, none
	if p.tail != none {
		p.next[p.tail] = b
	} else {
		p.head = b
	}
	p.tail = b
	p.cachedFree++
}

func (p *Pool) unlink(b int32) {
	if p.prev[b] != none {
		p.next[p.prev[b]] = p.next[b]
	} else {
		p.head = p.next[b]
	}
	if p.next[b] != none {
		p.prev[p.next[b]] = p.prev[b]
	} else {
		p.tail = p.prev[b]
	}
	p.cachedFree--
}

// chainSeed is the hash before a sequence's first block.
const chainSeed uint64 = 0xcbf29ce484222325

// chain is the hash of a block of tokens after the blocks hashed to h:
// FNV-1a over the ids' bytes, then splitmix64's finaliser.
func chain(h uint64, tokens []int32) uint64 {
	for _, t := range tokens {
		u := uint32(t)
		for range 4 {
			h ^= uint64(u & 0xff)
			h *= 0x100000001b3
			u >>= 8
		}
	}
	h = (h ^ h>>30) * 0xBF58476D1CE4E5B9
	h = (h ^ h>>27) * 0x94D049BB133111EB
	return h ^ h>>31
}

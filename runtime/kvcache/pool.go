// Package kvcache is the bookkeeping of a paged KV cache, shared by every
// device: a pool of fixed-size blocks of token positions, a block table per
// sequence, and prefix reuse. It holds no keys or values itself: a device
// keeps them in one buffer of Blocks() blocks and reads a sequence's
// position p at block table[p/BlockTokens], row p%BlockTokens.
//
// A full block whose tokens are known is registered under a chained hash
// (its tokens and the hash of the block before it), so a later prompt that
// starts with the same tokens takes the block read-only instead of
// computing it again. Blocks are reference-counted; a registered block
// nobody holds stays cached until a new allocation evicts it, least
// recently released first. Nothing here allocates after NewPool except the
// first registration of a hash (the index map is sized for every block up
// front).
package kvcache

import (
	"errors"
	"fmt"
)

// ErrNoBlocks is returned when the pool has too few free or evictable
// blocks for a request now; blocks come back as running sequences end.
var ErrNoBlocks = errors.New("no free KV cache blocks")

// ErrTooLarge is returned when a request needs more blocks than the whole
// pool holds: it can never run on this pool.
var ErrTooLarge = errors.New("more KV cache blocks than the pool holds")

const none = -1

// Pool is a fixed set of blocks of BlockTokens positions each. It is not
// safe for concurrent use: one scheduler owns it.
type Pool struct {
	blockTokens int
	refs        []int32 // holders of each block
	// Registered blocks: their chain hash, the block before them in their
	// chain (none for a prompt's first block) and their tokens. The index
	// finds a block by hash; lookups then compare parent and tokens, so a
	// hash collision is a miss, never wrong keys.
	registered []bool
	hash       []uint64
	parent     []int32
	tokens     []int32 // [blocks][blockTokens]
	index      map[uint64]int32
	free       []int32 // unregistered blocks nobody holds (a stack)
	// lru links registered blocks nobody holds, oldest release first.
	prev, next []int32
	head, tail int32
	cachedFree int // blocks in the lru list
	hits       uint64
	queries    uint64
}

// NewPool makes a pool of blocks blocks of blockTokens positions.
func NewPool(blocks, blockTokens int) (*Pool, error) {
	if blocks < 1 || blockTokens < 1 {
		return nil, fmt.Errorf("kvcache: a pool of %d blocks of %d tokens holds nothing", blocks, blockTokens)
	}
	p := &Pool{
		blockTokens: blockTokens,
		refs:        make([]int32, blocks),
		registered:  make([]bool, blocks),
		hash:        make([]uint64, blocks),
		parent:      make([]int32, blocks),
		tokens:      make([]int32, blocks*blockTokens),
		index:       make(map[uint64]int32, blocks),
		free:        make([]int32, blocks),
		prev:        make([]int32, blocks),
		next:        make([]int32, blocks),
		head:        none,
		tail:        none,
	}
	// Popped from the end: block 0 first.
	for i := range p.free {
		p.free[i] = int32(blocks - 1 - i)
	}
	return p, nil
}

// Blocks is the pool's size in blocks.
func (p *Pool) Blocks() int { return len(p.refs) }

// BlockTokens is the number of positions one block holds.
func (p *Pool) BlockTokens() int { return p.blockTokens }

// BlocksFor is the number of blocks that hold n positions.
func (p *Pool) BlocksFor(n int) int { return (n + p.blockTokens - 1) / p.blockTokens }

// Stats is the pool's state for metrics.
type Stats struct {
	Blocks int // the pool's size
	Used   int // blocks held by at least one sequence
	Cached int // registered blocks nobody holds: free for allocation, kept for reuse until evicted
	Free   int // blocks nobody holds (Cached included)
	// Prefix reuse, counted in prompt tokens: Queries is every admitted
	// prompt's length, Hits the positions taken from cached blocks.
	Hits, Queries uint64
}

// Stats says how the pool's blocks are used.
func (p *Pool) Stats() Stats {
	free := len(p.free) + p.cachedFree
	return Stats{Blocks: len(p.refs), Used: len(p.refs) - free, Cached: p.cachedFree, Free: free, Hits: p.hits, Queries: p.queries}
}

package driver

import (
	"context"
	"io"
	"slices"
)

// VectorIndex finds the memories whose embeddings are nearest a query vector
// by cosine similarity. The engine owns one per store and keeps it in step
// with the store's change log; implementations live in core/vector (exact and
// HNSW) and serve every backend.
//
// Vectors are unit length (the engine normalises them), so the score of a hit
// is the dot product. Implementations must be safe for concurrent use and
// must copy vectors they keep.
type VectorIndex interface {
	// Add inserts entries, replacing any entry with the same ID.
	Add(ctx context.Context, entries ...VectorEntry) error
	// Remove deletes ids; unknown ids are ignored.
	Remove(ctx context.Context, ids ...int64) error
	// Search returns up to k entries matching f, highest similarity first,
	// ties broken by ascending ID.
	Search(ctx context.Context, q []float32, k int, f VectorFilter) ([]Hit, error)
	// Len returns the number of entries.
	Len() int
}

// VectorEntry is one vector with the attributes searches filter on.
type VectorEntry struct {
	ID        int64
	Namespace string
	Pool      Pool
	Vector    []float32
}

// VectorFilter restricts a vector search. A nil slice places no restriction.
type VectorFilter struct {
	Namespaces []string
	Pools      []Pool
}

// Match reports whether e passes f.
func (f VectorFilter) Match(e *VectorEntry) bool {
	return (f.Namespaces == nil || slices.Contains(f.Namespaces, e.Namespace)) &&
		(f.Pools == nil || slices.Contains(f.Pools, e.Pool))
}

// PersistentVectorIndex is an optional interface of VectorIndex for indexes
// that are expensive to rebuild (HNSW): the engine saves a snapshot next to
// the store and on open loads it and replays the change log since.
type PersistentVectorIndex interface {
	VectorIndex
	Save(w io.Writer) error
}

// VectorHolder is an optional interface of VectorIndex that reports whether
// the index holds an entry as given: e.ID, live, in e.Namespace and e.Pool,
// with a vector whose cosine similarity to e.Vector is at least
// HoldsSimilarity (a snapshot written on another CPU may round differently).
// It costs a lookup and one dot product, where a search to the same effect
// walks a graph; the engine checks a loaded snapshot against the store with
// it (an index without it is checked by searches).
type VectorHolder interface {
	Holds(e VectorEntry) bool
}

// HoldsSimilarity is the similarity from which VectorHolder.Holds takes two
// vectors for the same.
const HoldsSimilarity = 0.999

// VectorIndexSizer is an optional interface of VectorIndex that estimates
// the memory the index holds (vectors, graph, bookkeeping), for Stats and
// `memos stats`. The estimate counts allocated capacity, not just length.
type VectorIndexSizer interface {
	MemoryBytes() int64
}

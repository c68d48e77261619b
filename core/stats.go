package core

import (
	"context"
	"slices"
)

// Stats summarises a store as seen from one handle's scope. On a limited
// handle (see Limit) the store-wide figures — Seq, StoreMemories, Backend
// and the vector index's and snapshot's sizes — are left out (zero), and
// Vectors counts the vectors of the memories in scope.
type Stats struct {
	Memories    int            `json:"memories"`
	ByNamespace map[string]int `json:"by_namespace"`
	ByPool      map[string]int `json:"by_pool"`
	ByType      map[string]int `json:"by_type"`
	ByStatus    map[string]int `json:"by_status"`
	Versions    int            `json:"versions"`
	Edges       int            `json:"edges"` // between memories in scope
	Embedder    ModelInfo      `json:"embedder"`
	Vectors     int            `json:"vectors"`                // entries in the vector index (limited: those in scope)
	VectorIndex string         `json:"vector_index,omitempty"` // its kind: exact, hnsw
	// VectorPrecision is how the index stores vectors: float32, int8.
	VectorPrecision string `json:"vector_precision,omitempty"`
	Seq             uint64 `json:"seq,omitempty"` // latest change-log sequence
	// Backend holds backend-specific figures (file size, …) when the backend
	// implements BackendStater.
	Backend map[string]any `json:"backend,omitempty"`
	// StoreMemories counts every memory in the store, in every namespace
	// and status: the figure the store's sizes are divided by.
	StoreMemories int `json:"store_memories,omitempty"`
	// VectorIndexBytes is the vector index's estimate of the memory it
	// holds (0 when the index does not implement VectorIndexSizer).
	VectorIndexBytes int64 `json:"vector_index_bytes,omitempty"`
	// VectorSnapshotBytes is the size of the vector index snapshot
	// (Options.VectorSnapshot) as the last Close wrote it; 0 without one.
	// For a snapshot kept in the store (no file, a backend that keeps
	// blobs: postgres) it is the size this engine last read or wrote.
	VectorSnapshotBytes int64 `json:"vector_snapshot_bytes,omitempty"`
}

// Stats counts the memories in this handle's scope (every status), their
// versions and the edges between them, and (unless the handle is limited)
// the store's memories and index sizes. With a backend whose ReadTx
// implements Counter it reads counts (an aggregate over an index);
// without, it reads every memory of the store: O(n).
func (e *Engine) Stats(ctx context.Context) (*Stats, error) {
	const op = "stats"
	if err := e.checkOpen(op); err != nil {
		return nil, err
	}
	st := &Stats{ByNamespace: map[string]int{}, ByPool: map[string]int{}, ByType: map[string]int{},
		ByStatus: map[string]int{}, Embedder: e.model}
	limited := e.only != nil
	edges := map[Edge]bool{}
	in := map[int64]bool{}
	err := e.b.View(ctx, func(tx ReadTx) error {
		var err error
		if st.Seq, err = tx.Seq(); err != nil {
			return err
		}
		if c, ok := tx.(Counter); ok {
			return e.count(c, st)
		}
		// One pass over the whole store: every memory counts towards
		// StoreMemories, those in scope towards the rest.
		return tx.Scan(ScanOptions{}, func(m *Memory) error {
			st.StoreMemories++
			if !e.inScope(m) {
				return nil
			}
			in[m.ID] = true
			st.Memories++
			st.ByNamespace[m.Namespace]++
			st.ByPool[string(m.Pool)]++
			st.ByType[string(m.Type)]++
			st.ByStatus[string(m.Status)]++
			st.Versions += m.Version
			if limited && e.emb != nil && m.Status == StatusActive && m.Embedding.Model == e.model.ID && m.Embedding.Dim() == e.model.Dim {
				st.Vectors++ // what the index holds for m (see vecsync.Index.Sync)
			}
			es, err := tx.Edges(m.ID)
			for _, ed := range es {
				edges[Edge{From: ed.From, To: ed.To, Type: ed.Type}] = true
			}
			return err
		})
	})
	if err != nil {
		return nil, &Error{Op: op, Err: err}
	}
	for ed := range edges {
		// An edge to a memory out of scope is left out, like the memory.
		if in[ed.From] && in[ed.To] {
			st.Edges++
		}
	}
	if limited {
		// A caller limited to namespaces learns nothing of the others: not
		// how many memories the store holds, how much it changes or how
		// large its files and index are.
		st.Seq, st.StoreMemories = 0, 0
		vs := e.vec.Stats()
		st.VectorIndex, st.VectorPrecision = vs.Kind, vs.Precision
		return st, nil
	}
	if err := e.vec.Sync(ctx); err != nil {
		return nil, &Error{Op: op, Err: err}
	}
	vs := e.vec.Stats()
	st.Vectors, st.VectorIndex, st.VectorPrecision = vs.Vectors, vs.Kind, vs.Precision
	st.VectorIndexBytes, st.VectorSnapshotBytes = vs.Bytes, vs.SnapshotBytes
	if bs, ok := e.b.(BackendStater); ok {
		if st.Backend, err = bs.BackendStats(ctx); err != nil {
			return nil, &Error{Op: op, Err: err}
		}
	}
	return st, nil
}

// count fills st from the backend's counts instead of reading every
// memory.
func (e *Engine) count(c Counter, st *Stats) error {
	limited := e.only != nil
	opts := CountOptions{}
	if limited {
		// A limited handle learns nothing of the other namespaces.
		opts.Namespaces = e.scope()
	}
	if e.emb != nil {
		opts.Model, opts.Dim = e.model.ID, e.model.Dim
	}
	fcs, err := c.Count(opts)
	if err != nil {
		return err
	}
	scope := e.scope()
	for _, fc := range fcs {
		st.StoreMemories += fc.Memories
		if !slices.Contains(scope, fc.Namespace) {
			continue
		}
		st.Memories += fc.Memories
		st.ByNamespace[fc.Namespace] += fc.Memories
		st.ByPool[string(fc.Pool)] += fc.Memories
		st.ByType[string(fc.Type)] += fc.Memories
		st.ByStatus[string(fc.Status)] += fc.Memories
		st.Versions += fc.Versions
		if limited && e.emb != nil {
			st.Vectors += fc.Embedded
		}
	}
	st.Edges, err = c.CountEdges(scope)
	return err
}

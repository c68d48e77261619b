// Package vecsync keeps the engine's vector index in step with the store:
// the live index (exact or HNSW, and the switch of VectorIndex "auto" to
// HNSW while the engine is open), its snapshot (a file, or a blob in the
// store), the follower that
// applies other processes' writes in the background, and the embedding
// cache in front of the embedder.
//
// The store's change log is the source of truth: Sync replays what was
// written since the index last looked, so the index never needs to be told
// about a write. The engine (core) holds one *Index, calls Sync after its
// writes and before its vector searches, Forgotten after a forget, and
// Stop and Save on Close. The package reads the store through core/driver
// only and never imports the engine.
package vecsync

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/vector"
)

// Config says which index to keep and where its snapshot lives.
type Config struct {
	// Model is the embedding model of the store's vectors. The zero value
	// means no embedder: there is no index (Sync and Search do nothing),
	// but the snapshot file is still removed by Forgotten.
	Model driver.ModelInfo
	// Index is "exact" (also ""), "hnsw" or "auto"; the caller has
	// validated it.
	Index string
	// Threshold is the size from which "auto" switches to HNSW (> 0).
	Threshold int
	// MinRecall is the recall@10 against the exact index that an "auto"
	// graph must reach to replace it.
	MinRecall float64
	// Precision is how the index stores vectors.
	Precision vector.Precision
	// Snapshot is the snapshot file; "" means none, or the blob "vectors"
	// in the store when the backend keeps blobs (driver.BlobStore).
	Snapshot string
}

// Index is the engine's vector index and what keeps it current. It is safe
// for concurrent use.
type Index struct {
	b     driver.Backend
	model driver.ModelInfo
	prec  vector.Precision

	mu   sync.Mutex    // serialises syncs of live with the change log
	live *live         // nil without a model
	seq  atomic.Uint64 // the change-log seq live reflects
	auto auto          // VectorIndex "auto": the switch to HNSW while open
	snap snapshot
	// follow is the background sync on a ChangeWaiter (nil: none).
	follow *follower
}

// Open opens the index over b: from the snapshot when one matches the
// store, then brought up to date with the change log. On a backend that
// reports other processes' writes (driver.ChangeWaiter) it keeps following
// them in the background until Stop.
func Open(ctx context.Context, b driver.Backend, cfg Config) (*Index, error) {
	x := &Index{b: b, model: cfg.Model, prec: cfg.Precision, snap: snapshot{path: cfg.Snapshot}}
	// Without a file, a backend that keeps blobs keeps the snapshot.
	x.snap.blobs, _ = b.(driver.BlobStore)
	x.snap.inStore = x.snap.blobs != nil && cfg.Snapshot == ""
	if cfg.Model.ID == "" {
		return x, nil
	}
	if err := x.open(ctx, cfg); err != nil {
		return nil, err
	}
	x.startFollowing()
	return x, nil
}

// Sync brings the index up to date with the store's change log, which also
// covers writes made by other processes.
//
// Every vector search calls it. When the store has not changed since the
// index last looked, which is the common case, it only reads the store's
// seq, without taking x.mu: concurrent searches do not queue behind one
// another's read transaction (with 8 clients of memos serve they spent
// most of their time waiting here).
func (x *Index) Sync(ctx context.Context) error {
	if x.live == nil {
		return nil
	}
	var seq uint64
	err := x.b.View(ctx, func(tx driver.ReadTx) (err error) {
		seq, err = tx.Seq()
		return err
	})
	if err != nil {
		return fmt.Errorf("sync vector index: %w", err)
	}
	if seq == x.seq.Load() {
		x.maybeSwitch()
		return nil
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	last, err := x.applyChanges(ctx, x.live, x.seq.Load())
	if err != nil {
		return err
	}
	x.seq.Store(last)
	x.maybeSwitch()
	return nil
}

// applyChanges applies the change log after seq since to idx and returns
// the seq it reached.
func (x *Index) applyChanges(ctx context.Context, idx driver.VectorIndex, since uint64) (uint64, error) {
	var last uint64
	var add []driver.VectorEntry
	var remove []int64
	err := x.b.View(ctx, func(tx driver.ReadTx) error {
		seq, err := tx.Seq()
		if err != nil || seq == since {
			last = seq
			return err
		}
		last = seq
		return tx.Changes(since, func(c driver.Change) error {
			if c.Deleted || c.Status != driver.StatusActive || c.Embedding.Model != x.model.ID || c.Embedding.Dim() != x.model.Dim {
				remove = append(remove, c.ID)
				return nil
			}
			add = append(add, driver.VectorEntry{ID: c.ID, Namespace: c.Namespace, Pool: c.Pool, Vector: c.Embedding.Vector})
			return nil
		})
	})
	if err != nil {
		return 0, fmt.Errorf("sync vector index: %w", err)
	}
	if len(remove) > 0 {
		if err := idx.Remove(ctx, remove...); err != nil {
			return 0, fmt.Errorf("sync vector index: %w", err)
		}
	}
	// Later syncs add in chunks, so that a search waits for one chunk at
	// most; the first fills an empty index in one call, which sizes its
	// storage once instead of growing it (and copying every vector so far)
	// chunk by chunk: a third of an open's CPU at 100k memories.
	chunk := 4096
	if idx.Len() == 0 {
		chunk = max(len(add), 1)
	}
	for i := 0; i < len(add); i += chunk {
		if err := idx.Add(ctx, add[i:min(i+chunk, len(add))]...); err != nil {
			return 0, fmt.Errorf("sync vector index: %w", err)
		}
	}
	return last, nil
}

// Search returns the k entries nearest to q that pass f; none without a
// model. Call Sync first to see the latest writes.
func (x *Index) Search(ctx context.Context, q []float32, k int, f driver.VectorFilter) ([]driver.Hit, error) {
	if x.live == nil {
		return nil, nil
	}
	return x.live.Search(ctx, q, k, f)
}

// Len is the number of vectors in the index.
func (x *Index) Len() int {
	if x.live == nil {
		return 0
	}
	return x.live.Len()
}

// Stats describes the index and its snapshot.
type Stats struct {
	Vectors   int
	Kind      string // the current index's kind: exact, hnsw; "" without a model
	Precision string // how it stores vectors: float32, int8
	// Bytes is the index's estimate of the memory it holds (0 when it does
	// not implement driver.VectorIndexSizer).
	Bytes int64
	// SnapshotBytes is the snapshot file's size; 0 without one.
	SnapshotBytes int64
}

// Stats reports the index's size and kind and the snapshot file's size.
func (x *Index) Stats() Stats {
	var st Stats
	if x.live != nil {
		st.Vectors, st.Kind = x.live.Len(), x.live.kind()
		st.Precision = precisionOf(x.live.index()).String()
		if sz, ok := x.live.index().(driver.VectorIndexSizer); ok {
			st.Bytes = sz.MemoryBytes()
		}
	}
	st.SnapshotBytes = x.snap.size()
	return st
}

// Forgotten brings the index up to date after a forget: the snapshot (file
// or blob) is removed first (it may hold the forgotten vectors; Save writes a
// fresh one), then the index synced.
func (x *Index) Forgotten(ctx context.Context) error {
	if err := x.dropSnapshot(ctx); err != nil {
		return err
	}
	return x.Sync(ctx)
}

// Close releases what the live index holds outside the heap (a snapshot
// read in place: vector.Exact.Close). Call it after Stop and Save, when
// the engine closes; the index is empty afterwards.
func (x *Index) Close() error {
	if x.live == nil {
		return nil
	}
	if c, ok := x.live.index().(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// Stop ends the background work — the follower and a running HNSW build —
// and waits for it; none starts again. Save still works after it.
func (x *Index) Stop() {
	x.stopFollowing()
	x.stopSwitch()
}

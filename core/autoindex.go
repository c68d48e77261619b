package core

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// liveIndex is the engine's vector index as searches and writes see it: an
// index of one of the registered kinds, which VectorIndex "auto" replaces by
// an HNSW graph while the engine is open once the store grows past the
// threshold (see shared.maybeSwitch). Readers load the current index
// atomically, so the swap needs no lock on the search path.
type liveIndex struct {
	cur atomic.Pointer[namedIndex]
}

type namedIndex struct {
	idx  VectorIndex
	name string
}

var _ PersistentVectorIndex = (*liveIndex)(nil)

func newLiveIndex(idx VectorIndex, name string) *liveIndex {
	l := &liveIndex{}
	l.cur.Store(&namedIndex{idx, name})
	return l
}

func (l *liveIndex) index() VectorIndex { return l.cur.Load().idx }

// kind is the registered name of the current index's kind.
func (l *liveIndex) kind() string { return l.cur.Load().name }

func (l *liveIndex) Add(ctx context.Context, es ...VectorEntry) error {
	return l.index().Add(ctx, es...)
}
func (l *liveIndex) Remove(ctx context.Context, ids ...int64) error {
	return l.index().Remove(ctx, ids...)
}
func (l *liveIndex) Len() int { return l.index().Len() }
func (l *liveIndex) Search(ctx context.Context, q []float32, k int, f VectorFilter) ([]Hit, error) {
	return l.index().Search(ctx, q, k, f)
}

// Save saves the current index; one that cannot be saved is an error (the
// engine checks persistent() first).
func (l *liveIndex) Save(w io.Writer) error {
	p, ok := l.index().(PersistentVectorIndex)
	if !ok {
		return fmt.Errorf("vector index %s cannot be saved", l.kind())
	}
	return p.Save(w)
}

func (l *liveIndex) persistent() bool {
	_, ok := l.index().(PersistentVectorIndex)
	return ok
}

// autoIndex is the state of VectorIndex "auto" while the engine is open.
type autoIndex struct {
	threshold int // vectors from which HNSW serves searches; 0: not auto

	mu      sync.Mutex
	started bool // a build ran or runs (or the engine is closing)
	cancel  context.CancelFunc
	done    chan struct{} // closed when the build goroutine ends
}

// maybeSwitch starts building an HNSW graph in the background when the
// engine runs VectorIndex "auto", the current index is exact and it holds
// at least the threshold. Searches and writes go on against the exact index
// meanwhile; the graph replays the change log, catches up, and replaces the
// exact index under the sync lock, so no change is lost. At most one build
// runs per engine; a failed one is logged and not retried until reopen.
func (s *shared) maybeSwitch() {
	a := &s.auto
	if a.threshold <= 0 || s.vec == nil || s.vec.kind() != "exact" || s.vec.Len() < a.threshold {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.started {
		return
	}
	a.started = true
	ctx, cancel := context.WithCancel(context.Background())
	a.cancel, a.done = cancel, make(chan struct{})
	done := a.done
	slog.Info("memos: the store has outgrown the exact vector index; building an HNSW graph in the background (searches use the exact index until it is ready)",
		"vectors", s.vec.Len(), "threshold", a.threshold)
	go func() {
		defer close(done)
		start := time.Now()
		if err := s.switchToHNSW(ctx); err != nil {
			if ctx.Err() == nil {
				slog.Warn("memos: building the HNSW index failed; searches keep using the exact index", "err", err)
			}
			return
		}
		slog.Info("memos: the HNSW index now serves vector searches", "vectors", s.vec.Len(), "took", time.Since(start).Round(time.Millisecond))
	}()
}

// switchToHNSW builds the graph from the change log without holding the
// sync lock (a few rounds, each replaying what the last one missed), then
// replays the rest and swaps it in under the lock.
func (s *shared) switchToHNSW(ctx context.Context) error {
	d := vectorIndexes["hnsw"]
	h, err := d.new(s.model.Dim)
	if err != nil {
		return err
	}
	var seq uint64
	for range 4 {
		last, err := s.applyChanges(ctx, h, seq)
		if err != nil {
			return err
		}
		if last == seq {
			break
		}
		seq = last
	}
	s.vecMu.Lock()
	defer s.vecMu.Unlock()
	last, err := s.applyChanges(ctx, h, seq)
	if err != nil {
		return err
	}
	s.vec.cur.Store(&namedIndex{h, "hnsw"})
	s.vecSeq.Store(last)
	s.snapMu.Lock()
	s.snapHeader.Index = "hnsw"
	s.snapOK = false // the file, if any, holds the exact index
	s.snapMu.Unlock()
	return nil
}

// stopSwitch cancels a background build, waits for it to end and keeps
// another from starting (Close).
func (s *shared) stopSwitch() {
	a := &s.auto
	a.mu.Lock()
	a.started = true
	cancel, done := a.cancel, a.done
	a.mu.Unlock()
	if done != nil {
		cancel()
		<-done
	}
}

package core

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
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
	threshold int     // vectors from which HNSW serves searches; 0: not auto
	minRecall float64 // what the graph must reach in checkRecall

	mu      sync.Mutex
	started bool // a build ran or runs (or the engine is closing)
	cancel  context.CancelFunc
	done    chan struct{} // closed when the build goroutine ends
}

// maybeSwitch starts building an HNSW graph in the background when the
// engine runs VectorIndex "auto", the current index is exact and it holds
// at least the threshold. Searches and writes go on against the exact index
// meanwhile; the graph replays the change log, catches up, and replaces the
// exact index under the sync lock, so no change is lost — if it answers
// like the exact index: a graph whose recall@10 on a sample of the store's
// own vectors is below DefaultHNSWMinRecall is dropped, and the next build
// waits until the store has doubled. At most one build runs at a time; a
// failed one is logged and not retried until reopen.
func (s *shared) maybeSwitch() {
	a := &s.auto
	if s.vec == nil || s.vec.kind() != "exact" {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.started || a.threshold <= 0 || s.vec.Len() < a.threshold {
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
		switched, err := s.switchToHNSW(ctx)
		if err != nil {
			if ctx.Err() == nil {
				slog.Warn("memos: building the HNSW index failed; searches keep using the exact index", "err", err)
			}
			return
		}
		if !switched {
			return
		}
		slog.Info("memos: the HNSW index now serves vector searches", "vectors", s.vec.Len(), "took", time.Since(start).Round(time.Millisecond))
	}()
}

// switchToHNSW builds the graph from the change log without holding the
// sync lock (a few rounds, each replaying what the last one missed), checks
// that it answers like the exact index (checkRecall), then replays the rest
// and swaps it in under the lock. A graph whose recall is too low is
// dropped: the exact index stays, and the check is made again when the
// store has doubled.
func (s *shared) switchToHNSW(ctx context.Context) (switched bool, err error) {
	d := vectorIndexes["hnsw"]
	h, err := d.new(s.model.Dim, s.prec)
	if err != nil {
		return false, err
	}
	sampled := &sampler{VectorIndex: h, keep: autoSample}
	var seq uint64
	for range 4 {
		last, err := s.applyChanges(ctx, sampled, seq)
		if err != nil {
			return false, err
		}
		if last == seq {
			break
		}
		seq = last
	}
	check, err := checkRecall(ctx, s.vec.index(), h, sampled.vecs)
	if err != nil {
		return false, err
	}
	a := &s.auto
	a.mu.Lock()
	need := a.minRecall
	if check.Recall < need {
		a.threshold = 2 * h.Len()
		a.started = false
	}
	a.mu.Unlock()
	if check.Recall < need {
		slog.Info("memos: the HNSW graph answers too differently from the exact index on this store's vectors; searches keep the exact index",
			"recall_at_10", fmt.Sprintf("%.3f", check.Recall), "needed", need, "queries", check.Queries,
			"exact_ms_per_query", check.ExactMs, "hnsw_ms_per_query", check.HNSWMs, "next_check_at", 2*h.Len())
		return false, nil
	}
	slog.Info("memos: the HNSW graph answers like the exact index", "recall_at_10", fmt.Sprintf("%.3f", check.Recall),
		"queries", check.Queries, "exact_ms_per_query", check.ExactMs, "hnsw_ms_per_query", check.HNSWMs)
	s.vecMu.Lock()
	defer s.vecMu.Unlock()
	last, err := s.applyChanges(ctx, h, seq)
	if err != nil {
		return false, err
	}
	s.vec.cur.Store(&namedIndex{h, "hnsw"})
	s.vecSeq.Store(last)
	s.snapMu.Lock()
	s.snapHeader.Index = "hnsw"
	s.snapOK = false // the file, if any, holds the exact index
	s.snapMu.Unlock()
	return true, nil
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

// autoSample is how many of the store's vectors the recall check of "auto"
// asks both indexes for.
const autoSample = 100

// DefaultHNSWMinRecall is the recall@10 against the exact index that an
// HNSW graph built by VectorIndex "auto" must reach on the store's own
// vectors to replace it.
const DefaultHNSWMinRecall = 0.97

// sampler passes entries on to an index and keeps a uniform sample of up to
// keep of their vectors (reservoir sampling, seeded, so a store samples the
// same vectors every time).
type sampler struct {
	VectorIndex
	keep int
	seen int
	vecs []VectorEntry
	rng  *rand.Rand
}

func (s *sampler) Add(ctx context.Context, es ...VectorEntry) error {
	if err := s.VectorIndex.Add(ctx, es...); err != nil {
		return err
	}
	if s.rng == nil {
		s.rng = rand.New(rand.NewPCG(1, 2))
	}
	for _, e := range es {
		s.seen++
		if len(s.vecs) < s.keep {
			s.vecs = append(s.vecs, e)
		} else if j := s.rng.IntN(s.seen); j < s.keep {
			s.vecs[j] = e
		}
	}
	return nil
}

// recallCheck is what checkRecall measured.
type recallCheck struct {
	Queries int
	// Recall is the mean share of the exact index's top 10 that the
	// approximate one returned, each query's own entry left out.
	Recall float64
	// ExactMs and HNSWMs are the mean wall time per query.
	ExactMs, HNSWMs float64
}

// checkRecall asks exact and approx for the neighbours of each of the
// sampled vectors and compares their top 10, leaving out the sampled entry
// itself (both find it first). With no samples the recall is 1.
func checkRecall(ctx context.Context, exact, approx VectorIndex, samples []VectorEntry) (recallCheck, error) {
	const k = 10
	rc := recallCheck{Recall: 1}
	if len(samples) == 0 {
		return rc, nil
	}
	top := func(idx VectorIndex, e VectorEntry) (map[int64]bool, time.Duration, error) {
		t0 := time.Now()
		hits, err := idx.Search(ctx, e.Vector, k+1, VectorFilter{})
		took := time.Since(t0)
		if err != nil {
			return nil, 0, fmt.Errorf("recall check: %w", err)
		}
		ids := map[int64]bool{}
		for _, h := range hits {
			if h.ID != e.ID && len(ids) < k {
				ids[h.ID] = true
			}
		}
		return ids, took, nil
	}
	var sum float64
	var te, ta time.Duration
	for _, e := range samples {
		want, d1, err := top(exact, e)
		if err != nil {
			return rc, err
		}
		got, d2, err := top(approx, e)
		if err != nil {
			return rc, err
		}
		te, ta = te+d1, ta+d2
		if len(want) == 0 {
			sum++
			continue
		}
		n := 0
		for id := range want {
			if got[id] {
				n++
			}
		}
		sum += float64(n) / float64(len(want))
	}
	q := float64(len(samples))
	return recallCheck{Queries: len(samples), Recall: sum / q,
		ExactMs: float64(te.Microseconds()) / 1000 / q, HNSWMs: float64(ta.Microseconds()) / 1000 / q}, nil
}

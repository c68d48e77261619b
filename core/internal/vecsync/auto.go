package vecsync

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/memos-go/memos/core/driver"
)

// auto is the state of VectorIndex "auto" while the engine is open.
type auto struct {
	threshold int     // vectors from which HNSW serves searches; 0: not auto
	minRecall float64 // what the graph must reach in checkRecall

	mu      sync.Mutex
	started bool // a build ran or runs (or the engine is closing)
	cancel  context.CancelFunc
	done    chan struct{} // closed when the build goroutine ends
}

// maybeSwitch starts building an HNSW graph in the background when the
// index runs VectorIndex "auto", the current index is exact and it holds
// at least the threshold. Searches and writes go on against the exact index
// meanwhile; the graph replays the change log, catches up, and replaces the
// exact index under the sync lock, so no change is lost — if it answers
// like the exact index: a graph whose recall@10 on a sample of the store's
// own vectors is below Config.MinRecall is dropped, and the next build
// waits until the store has doubled. At most one build runs at a time; a
// failed one is logged and not retried until reopen.
func (x *Index) maybeSwitch() {
	a := &x.auto
	if x.live == nil || x.live.kind() != "exact" {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.started || a.threshold <= 0 || x.live.Len() < a.threshold {
		return
	}
	a.started = true
	ctx, cancel := context.WithCancel(context.Background())
	a.cancel, a.done = cancel, make(chan struct{})
	done := a.done
	slog.Info("memos: the store has outgrown the exact vector index; building an HNSW graph in the background (searches use the exact index until it is ready)",
		"vectors", x.live.Len(), "threshold", a.threshold)
	go func() {
		defer close(done)
		start := time.Now()
		switched, err := x.switchToHNSW(ctx)
		if err != nil {
			if ctx.Err() == nil {
				slog.Warn("memos: building the HNSW index failed; searches keep using the exact index", "err", err)
			}
			return
		}
		if !switched {
			return
		}
		slog.Info("memos: the HNSW index now serves vector searches", "vectors", x.live.Len(), "took", time.Since(start).Round(time.Millisecond))
	}()
}

// switchToHNSW builds the graph from the change log without holding the
// sync lock (a few rounds, each replaying what the last one missed), checks
// that it answers like the exact index (checkRecall), then replays the rest
// and swaps it in under the lock. A graph whose recall is too low is
// dropped: the exact index stays, and the check is made again when the
// store has doubled.
func (x *Index) switchToHNSW(ctx context.Context) (switched bool, err error) {
	h, err := kinds["hnsw"].new(x.model.Dim, x.prec)
	if err != nil {
		return false, err
	}
	sampled := &sampler{VectorIndex: h, keep: autoSample}
	var seq uint64
	for range 4 {
		last, err := x.applyChanges(ctx, sampled, seq)
		if err != nil {
			return false, err
		}
		if last == seq {
			break
		}
		seq = last
	}
	check, err := checkRecall(ctx, x.live.index(), h, sampled.vecs)
	if err != nil {
		return false, err
	}
	a := &x.auto
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
	x.mu.Lock()
	defer x.mu.Unlock()
	last, err := x.applyChanges(ctx, h, seq)
	if err != nil {
		return false, err
	}
	x.live.cur.Store(&namedIndex{h, "hnsw"})
	x.seq.Store(last)
	x.snap.mu.Lock()
	x.snap.header.Index = "hnsw"
	x.snap.ok = false // the snapshot, if any, holds the exact index
	x.snap.mu.Unlock()
	return true, nil
}

// stopSwitch cancels a background build, waits for it to end and keeps
// another from starting (Stop).
func (x *Index) stopSwitch() {
	a := &x.auto
	a.mu.Lock()
	a.started = true
	cancel, done := a.cancel, a.done
	a.mu.Unlock()
	if done != nil {
		cancel()
		<-done
	}
}

// SetMinRecall sets the recall an "auto" graph must reach to replace the
// exact index, for tests that need a build to fail or pass.
func (x *Index) SetMinRecall(r float64) {
	x.auto.mu.Lock()
	x.auto.minRecall = r
	x.auto.mu.Unlock()
}

// WaitBuild waits for the latest background HNSW build to end and returns
// the store size at which "auto" builds next, for tests.
func (x *Index) WaitBuild() int {
	x.auto.mu.Lock()
	done := x.auto.done
	x.auto.mu.Unlock()
	if done != nil {
		<-done
	}
	x.auto.mu.Lock()
	defer x.auto.mu.Unlock()
	return x.auto.threshold
}

// autoSample is how many of the store's vectors the recall check of "auto"
// asks both indexes for.
const autoSample = 100

// sampler passes entries on to an index and keeps a uniform sample of up to
// keep of their vectors (reservoir sampling, seeded, so a store samples the
// same vectors every time).
type sampler struct {
	driver.VectorIndex
	keep int
	seen int
	vecs []driver.VectorEntry
	rng  *rand.Rand
}

func (s *sampler) Add(ctx context.Context, es ...driver.VectorEntry) error {
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
func checkRecall(ctx context.Context, exact, approx driver.VectorIndex, samples []driver.VectorEntry) (recallCheck, error) {
	const k = 10
	rc := recallCheck{Recall: 1}
	if len(samples) == 0 {
		return rc, nil
	}
	top := func(idx driver.VectorIndex, e driver.VectorEntry) (map[int64]bool, time.Duration, error) {
		t0 := time.Now()
		hits, err := idx.Search(ctx, e.Vector, k+1, driver.VectorFilter{})
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

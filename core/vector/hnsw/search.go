package hnsw

import (
	"context"
	"fmt"
	"math"

	"github.com/memos-go/memos/core/driver"
)

// filter is a driver.VectorFilter compiled against the index's interned
// namespaces and pools. A nil slice places no restriction.
type filter struct {
	ns, pool []bool
}

func (f *filter) accept(ix *Index, slot uint32) bool {
	n := &ix.nodes[slot]
	return n.state == stateLive && (f.ns == nil || f.ns[n.ns]) && (f.pool == nil || f.pool[n.pool])
}

func (f *filter) restricts() bool { return f.ns != nil || f.pool != nil }

// compile builds f's filter and counts the live entries it matches.
func (ix *Index) compile(f driver.VectorFilter) (*filter, int) {
	flt := &filter{}
	if f.Namespaces != nil {
		flt.ns = make([]bool, len(ix.nsNames))
		for _, name := range f.Namespaces {
			if i, ok := ix.nsIndex[name]; ok {
				flt.ns[i] = true
			}
		}
	}
	if f.Pools != nil {
		flt.pool = make([]bool, len(ix.poolNames))
		for _, p := range f.Pools {
			if i, ok := ix.poolIndex[p]; ok {
				flt.pool[i] = true
			}
		}
	}
	if !flt.restricts() {
		return flt, ix.live
	}
	matching := 0
	for k, n := range ix.counts {
		if (flt.ns == nil || flt.ns[k.ns]) && (flt.pool == nil || flt.pool[k.pool]) {
			matching += n
		}
	}
	return flt, matching
}

// Search returns up to k live entries matching f, most similar to q first,
// ties broken by ascending ID, using Config.EfSearch. A hit's score is the
// cosine similarity of q and the entry (q is normalised on a copy). A query
// of the wrong dimension is an ErrDimensionMismatch error, a zero or
// non-finite one an ErrInvalid error; k <= 0 returns no hits. The returned
// slice is the caller's.
func (ix *Index) Search(ctx context.Context, q []float32, k int, f driver.VectorFilter) ([]driver.Hit, error) {
	return ix.SearchEf(ctx, q, k, 0, f)
}

// SearchEf is Search with the candidate list size ef instead of
// Config.EfSearch (ef <= 0 means Config.EfSearch). Larger ef trades speed
// for recall; at least k is always used.
//
// With a filter, the graph walk routes through entries the filter rejects
// but collects only those it accepts, and keeps expanding until it holds ef
// of them or the graph is exhausted; ef is widened by the square root of the
// inverse of the filter's selectivity. A filter matching few entries (see
// Config.ExactBelow), or at most k, is answered by an exact scan of the
// matching entries instead.
func (ix *Index) SearchEf(ctx context.Context, q []float32, k, ef int, f driver.VectorFilter) ([]driver.Hit, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("hnsw search: %w", err)
	}
	if len(q) != ix.dim {
		return nil, fmt.Errorf("hnsw search: %w: query has %d dimensions, the index has %d (embed the query with the store's model)",
			driver.ErrDimensionMismatch, len(q), ix.dim)
	}
	q, ok := unitCopy(q)
	if !ok {
		return nil, fmt.Errorf("hnsw search: %w: query vector is zero or has non-finite components", driver.ErrInvalid)
	}
	if k <= 0 {
		return []driver.Hit{}, nil
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	flt, matching := ix.compile(f)
	if matching == 0 {
		return []driver.Hit{}, nil
	}
	if ef <= 0 {
		ef = ix.cfg.EfSearch
	}
	ef = widen(min(max(ef, k), maxEf), matching, ix.live)

	s, _ := ix.searches.Get().(*searcher)
	if s == nil {
		s = new(searcher)
	}
	defer ix.searches.Put(s)

	var found []cand
	if matching <= k || (flt.restricts() && ix.scanCheaper(matching, ef)) {
		var err error
		if found, err = ix.scan(ctx, s, q, k, flt); err != nil {
			return nil, fmt.Errorf("hnsw search: %w", err)
		}
	} else {
		ep := ix.cand(q, ix.entry)
		for l := ix.top; l > 0; l-- {
			ep = ix.greedy(s, q, ep, l)
		}
		var acc accepter = liveOnly{}
		if flt.restricts() {
			acc = flt
		}
		found = ix.searchLayer(s, q, []cand{ep}, ef, 0, acc)
	}
	found = found[:min(k, len(found))]
	hits := make([]driver.Hit, len(found))
	for i, c := range found {
		hits[i] = driver.Hit{ID: c.id, Score: float64(c.sim)}
	}
	return hits, nil
}

// scanCheaper reports whether a filtered search over matching entries should
// scan them rather than walk the graph with list size ef (see
// Config.ExactBelow).
func (ix *Index) scanCheaper(matching, ef int) bool {
	switch b := ix.cfg.ExactBelow; {
	case b < 0:
		return false
	case b > 0:
		return matching <= b
	default:
		return matching <= 2*ix.cfg.M*ef
	}
}

// widen scales ef for a filter that matches a fraction of the live entries:
// the walk meets matching entries that much more rarely, and the ef-th
// matching one lies further out, so the list must be longer to reach the
// same recall. The square root keeps the cost of very selective filters in
// check; those are mostly scanned instead (see scanCheaper).
func widen(ef, matching, live int) int {
	if matching >= live {
		return ef
	}
	w := float64(ef) * math.Sqrt(float64(live)/float64(matching))
	return min(int(math.Ceil(w)), maxEf)
}

// scan returns, best first, the k entries accepted by flt that are nearest
// q, by comparing q with every one of them.
func (ix *Index) scan(ctx context.Context, s *searcher, q []float32, k int, flt *filter) ([]cand, error) {
	s.results = s.results[:0]
	for slot := range ix.nodes {
		if slot&0x3fff == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if !flt.accept(ix, uint32(slot)) {
			continue
		}
		c := ix.cand(q, uint32(slot))
		if len(s.results) < k {
			s.results.push(c)
		} else if better(c, s.results[0]) {
			s.results[0] = c
			s.results.fix()
		}
	}
	s.cands = s.results.drain(s.cands)
	return s.cands, nil
}

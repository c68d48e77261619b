package bolt

import (
	"context"
	"fmt"
	"sync"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"
	bq "github.com/blevesearch/bleve/v2/search/query"
	"github.com/blevesearch/bleve/v2/search/searcher"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/text"
)

// Keyword top-k without scoring every match.
//
// A natural-language question becomes an OR of its content words, and the
// search evaluates and scores every document that contains any of them: at
// 100k memories, tens of thousands for a question with a few common words.
// As on sqlite, an OR of plain terms and phrases (no prefix, NOT, AND or
// NEAR) whose document frequencies add up to more than keyword_prune_rows
// is evaluated in two phases (text.PlanPrune chooses the phrases):
//
//  1. The candidates are the documents that pass the filter and match the
//     candidate query (see candidates) of one of the rarest phrases, as
//     many as keep the sum of their document frequencies (termCount, or
//     countPhrase for a phrase of several tokens) within the budget. bleve
//     lists their ids without scoring them.
//  2. The usual search runs with its candidates restricted to those ids
//     (a DocIDQuery in the conjunction): each is evaluated and scored over
//     ALL the query's phrases as before, so scores are unchanged.
//
// When the limit-th hit scores above text.PrunePlan.Bound, no document
// outside the candidates can enter the top limit, and the result is the
// one scoring every match returns (same ids, order and scores). Otherwise
// it is the best of the candidates: an approximation, measured in the
// README (Keyword search). When fewer than limit candidates are hits, the
// whole search runs. keyword_prune_rows -1 turns the two phases off.

// pruneOutcome says how a keyword search was answered, for tests.
type pruneOutcome int

const (
	pruneNotTried pruneOutcome = iota // the query does not have the shape
	pruneExact                        // every match scored (few matches, no rare phrase, too few hits)
	pruneProved                       // two phases, result proved equal to scoring every match
	pruneApprox                       // two phases, best of the candidates
)

// searchPruned answers a keyword search in two phases (see above) and says
// how; outcome pruneExact (with no hits) means the whole search should
// run. cands are the search's candidate queries (filter included), fqs the
// filter's alone, eval its per-candidate callback, idfs its phrases'
// inverse document frequencies. The caller holds d.vis.
func (d *DB) searchPruned(ctx context.Context, cq *text.Query, plan text.PrunePlan, cands, fqs []bq.Query, eval searcher.CustomFilterFunc, size int, idfs []float64) ([]driver.Hit, pruneOutcome, error) {
	// Phase 1: the ids of the documents that pass the filter and may
	// contain a rare phrase.
	rare := make([]bq.Query, len(plan.Rare))
	for i, p := range plan.Rare {
		rare[i] = phraseCandidates(cq.Phrases()[p])
	}
	var (
		mu  sync.Mutex
		ids []string
	)
	collect := func(_ context.Context, dm *search.DocumentMatch) (bool, error) {
		mu.Lock()
		ids = append(ids, dm.ID)
		mu.Unlock()
		return false, nil
	}
	q1 := bq.NewConjunctionQuery(append([]bq.Query{bq.NewDisjunctionQuery(rare)}, fqs...))
	req := bleve.NewSearchRequestOptions(bq.NewCustomFilterQueryWithFilter(q1, collect, nil, nil), 0, 0, false)
	if _, err := d.idx.SearchInContext(ctx, req); err != nil {
		return nil, pruneExact, fmt.Errorf("bolt: search: candidates: %w", err)
	}
	if len(ids) < size {
		return nil, pruneExact, nil // too few: documents that are not candidates fill the rest
	}

	// Phase 2: the usual search, restricted to the candidates.
	restricted := append(cands[:len(cands):len(cands)], bq.NewDocIDQuery(ids))
	hits, err := d.scored(ctx, bq.NewConjunctionQuery(restricted), eval, size)
	if err != nil {
		return nil, pruneExact, err
	}
	if len(hits) < size {
		return nil, pruneExact, nil
	}
	if hits[size-1].Score > plan.Bound(idfs) {
		return hits, pruneProved, nil
	}
	return hits, pruneApprox, nil
}

package bolt

import (
	"cmp"
	"context"
	"fmt"
	"slices"
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
//  3. A document that is not a candidate contains only the other, common
//     phrases, so it scores below text.PrunePlan.Bound. When the limit-th
//     hit scores above that, no such document can enter the top limit, and
//     the result is the one scoring every match returns (same ids, order
//     and scores). Otherwise the rarest common phrase becomes rare: its
//     documents that are not candidates yet are scored in turn (phase 2
//     over them alone, their best merged with the best so far), and 3
//     runs again. With every phrase rare, every match was a candidate.
//
// So the result is always exact, as on sqlite (there, the same plan reads
// FTS5's postings). Past pruneScanShare times keyword_prune_rows
// candidates, every match is scored in one search instead. keyword_prune_rows
// -1 turns the two phases off.

// pruneOutcome says how a keyword search was answered, for tests.
type pruneOutcome int

const (
	pruneNotTried pruneOutcome = iota // the query does not have the shape
	pruneExact                        // every match scored (few matches, no rare phrase, too few hits)
	pruneProved                       // two phases, result proved equal to scoring every match
)

// pruneScanShare bounds the candidates of the two phases: past
// pruneScanShare times keyword_prune_rows of them, every match is scored.
const pruneScanShare = 8

// searchPruned answers a keyword search in two phases (see above) and says
// how; outcome pruneExact (with no hits) means the whole search should
// run. cands are the search's candidate queries (filter included), fqs the
// filter's alone, eval its per-candidate callback, idfs its phrases'
// inverse document frequencies. The caller holds d.vis.
func (d *DB) searchPruned(ctx context.Context, cq *text.Query, plan text.PrunePlan, cands, fqs []bq.Query, eval searcher.CustomFilterFunc, size int, idfs []float64) ([]driver.Hit, pruneOutcome, error) {
	seen := map[string]bool{}
	var hits []driver.Hit
	rare, common := plan.Rare, plan.Common
	for looked := 0; ; {
		// Phase 1: the ids of the documents that pass the filter and may
		// contain a rare phrase not looked up yet, and that are not
		// candidates already.
		qs := make([]bq.Query, 0, len(rare)-looked)
		for _, p := range rare[looked:] {
			qs = append(qs, phraseCandidates(cq.Phrases()[p]))
		}
		looked = len(rare)
		var (
			mu  sync.Mutex
			ids []string
		)
		collect := func(_ context.Context, dm *search.DocumentMatch) (bool, error) {
			mu.Lock()
			if !seen[dm.ID] {
				seen[dm.ID] = true
				ids = append(ids, dm.ID)
			}
			mu.Unlock()
			return false, nil
		}
		q1 := bq.NewConjunctionQuery(append([]bq.Query{bq.NewDisjunctionQuery(qs)}, fqs...))
		req := bleve.NewSearchRequestOptions(bq.NewCustomFilterQueryWithFilter(q1, collect, nil, nil), 0, 0, false)
		if _, err := d.idx.SearchInContext(ctx, req); err != nil {
			return nil, pruneExact, fmt.Errorf("bolt: search: candidates: %w", err)
		}
		if len(seen) > pruneScanShare*d.pruneRows {
			return nil, pruneExact, nil // about every match: score them all at once
		}

		// Phase 2: the usual search, restricted to the new candidates; a
		// document's score does not depend on the others, so the best of
		// all candidates are the best of the earlier best and the new.
		if len(ids) > 0 {
			restricted := append(cands[:len(cands):len(cands)], bq.NewDocIDQuery(ids))
			more, err := d.scored(ctx, bq.NewConjunctionQuery(restricted), eval, size)
			if err != nil {
				return nil, pruneExact, err
			}
			hits = append(hits, more...)
			slices.SortFunc(hits, func(a, b driver.Hit) int {
				if c := cmp.Compare(b.Score, a.Score); c != 0 {
					return c
				}
				return cmp.Compare(a.ID, b.ID)
			})
			hits = hits[:min(len(hits), size)]
		}
		// A document that is not a candidate has only common phrases; with
		// none left, every match was a candidate.
		bound := text.PrunePlan{Common: common}.Bound(idfs)
		if len(common) == 0 || len(hits) == size && hits[size-1].Score > bound {
			return hits, pruneProved, nil
		}
		// Not proved: the rarest common phrase gives candidates too.
		rare, common = append(slices.Clip(rare), common[0]), common[1:]
	}
}

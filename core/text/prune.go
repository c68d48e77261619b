package text

import (
	"fmt"
	"slices"
)

// Keyword top-k without scoring every match, the part both backends share.
//
// An OR of plain phrases (no prefix, NOT, AND or NEAR) whose document
// frequencies add up to more than a row budget is answered in two phases:
// the candidates are the documents that contain one of its rarest phrases
// (as many as keep the sum of their document frequencies within the
// budget), and each candidate is scored exactly over all the phrases. A
// document that is not a candidate contains none of the rare phrases, so
// its score is below the sum, over the common phrases, of idf·(k1+1), the
// limit of a phrase's bm25 term as its frequency grows: when the k-th best
// candidate scores above that bound, the candidates' top k is exactly the
// top k of every match. PlanPrune chooses the phrases and PrunePlan.Bound
// computes the bound; each backend finds and scores the candidates.

// pruneShare: when no phrase fits the row budget, the rarest one alone
// gives the candidates if its documents are at most 1/pruneShare of all the
// phrases' matches.
const pruneShare = 10

// DefaultPruneRows is the default row budget of the two-phase keyword
// search (the backends' keyword_prune_rows).
const DefaultPruneRows = 3000

// PruneRows validates a configured keyword_prune_rows: 0 is the default,
// -1 turns the two phases off (returned as -1), and any other negative
// number is an error naming the key.
func PruneRows(n int) (int, error) {
	switch {
	case n < -1:
		return 0, fmt.Errorf("keyword_prune_rows is %d; use a positive number of rows, 0 for the default (%d) or -1 to score every match", n, DefaultPruneRows)
	case n == 0:
		return DefaultPruneRows, nil
	}
	return n, nil
}

// A PrunePlan splits the phrases of an OR, by index, into the rare ones
// that give the candidates (rarest first) and the common rest.
type PrunePlan struct {
	Rare, Common []int
}

// PlanPrune orders phrases by their document frequencies dfs, rarest first
// (ties in the order given), and takes as rare the longest prefix whose
// frequencies add up to at most rows. It returns ok false when the two
// phases do not apply: rows is not positive, every phrase's documents fit
// the budget (scoring them all is cheap), or even the rarest phrase does
// not fit it and has more than a tenth of all the phrases' matches (there
// is no small candidate set). A rarest phrase over the budget but under that
// share gives the candidates alone: at a million memories of conversation,
// where every word of many questions is common, that took the 95th
// percentile of a keyword search from 293 to 98 ms.
func PlanPrune(dfs []int64, rows int) (p PrunePlan, ok bool) {
	if rows <= 0 {
		return PrunePlan{}, false
	}
	order := make([]int, len(dfs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case dfs[a] < dfs[b]:
			return -1
		case dfs[a] > dfs[b]:
			return 1
		}
		return 0
	})
	var total, sum int64
	rare := 0
	for i, j := range order {
		total += dfs[j]
		if rare == i && sum+dfs[j] <= int64(rows) {
			sum += dfs[j]
			rare++
		}
	}
	if total <= int64(rows) {
		return PrunePlan{}, false
	}
	if rare == 0 {
		// Even the rarest phrase has more documents than the budget: it
		// alone gives the candidates if that spares most of the work.
		if dfs[order[0]]*pruneShare > total {
			return PrunePlan{}, false
		}
		rare = 1
	}
	return PrunePlan{Rare: order[:rare], Common: order[rare:]}, true
}

// PlanPrune returns the plan of the two-phase search of q, whose phrases'
// document frequencies are dfs (by phrase index), with a budget of rows: ok
// when q is an OR of at least two plain phrases (no prefix; the shape
// query.Natural builds) and PlanPrune applies, Rare and Common then
// holding phrase indexes. A plan with Rare not nil and ok false means q
// has the shape but the plan does not apply.
func (q *Query) PlanPrune(dfs []int64, rows int) (plan PrunePlan, ok bool) {
	root := q.Root()
	if root.Op() != OpOr || len(root.Kids()) < 2 {
		return PrunePlan{}, false
	}
	kids := root.Kids()
	kdfs := make([]int64, len(kids))
	for i, k := range kids {
		if k.Op() != OpPhrase || q.Phrases()[k.Phrase()].Prefix {
			return PrunePlan{}, false
		}
		kdfs[i] = dfs[k.Phrase()]
	}
	kp, ok := PlanPrune(kdfs, rows)
	if !ok {
		return PrunePlan{Rare: []int{}}, false
	}
	// From the OR's operands to the query's phrases.
	for _, s := range [][]int{kp.Rare, kp.Common} {
		for i, k := range s {
			s[i] = kids[k].Phrase()
		}
	}
	return kp, true
}

// Bound returns a number above the bm25 score (as Corpus.Score computes
// it) of any document that contains none of the rare phrases, given every
// phrase's inverse document frequency idf: the sum over the common phrases
// of idf·(k1+1).
func (p PrunePlan) Bound(idf []float64) float64 {
	var b float64
	for _, i := range p.Common {
		b += MaxTerm(idf[i])
	}
	return b
}

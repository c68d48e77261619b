package backendtest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/query"
	"github.com/memos-go/memos/core/text"
)

// PruneQueries returns the keyword queries the backends' pruned-search
// tests compare with the exact evaluation: each of questions as
// query.Natural rewrites it, then n random ORs (seeded by seed) of 2 to 10
// parts, each a two-word phrase from one of contents, one of the 60 most
// frequent words, or any word of contents.
func PruneQueries(contents, questions []string, n int, seed uint64) []query.Node {
	var queries []query.Node
	for _, s := range questions {
		if q := query.Natural(s); q != nil {
			queries = append(queries, q)
		}
	}
	counts := map[string]int{}
	var docs [][]string
	for _, c := range contents {
		toks := text.Tokenize(c)
		docs = append(docs, toks)
		for _, w := range toks {
			counts[w]++
		}
	}
	if len(counts) == 0 {
		return queries
	}
	vocab := make([]string, 0, len(counts))
	for w := range counts {
		vocab = append(vocab, w)
	}
	slices.SortFunc(vocab, func(a, b string) int {
		if counts[a] != counts[b] {
			return counts[b] - counts[a]
		}
		return strings.Compare(a, b)
	})
	r := rand.New(rand.NewPCG(17, seed))
	for range n {
		var kids []query.Node
		for range 2 + r.IntN(9) {
			switch r.IntN(6) {
			case 0: // a phrase from a document
				toks := docs[r.IntN(len(docs))]
				if len(toks) >= 2 {
					i := r.IntN(len(toks) - 1)
					kids = append(kids, &query.Phrase{Terms: toks[i : i+2]})
				}
			case 1, 2: // a common word
				kids = append(kids, &query.Term{Text: vocab[r.IntN(min(60, len(vocab)))]})
			default:
				kids = append(kids, &query.Term{Text: vocab[r.IntN(len(vocab))]})
			}
		}
		if len(kids) >= 2 {
			queries = append(queries, &query.Or{Children: kids})
		}
	}
	return queries
}

// EveryNth returns every nth of qs (all of them for n ≤ 1): the share of a
// randomized test's cases that runs under the race detector.
func EveryNth(qs []query.Node, n int) []query.Node {
	if n <= 1 {
		return qs
	}
	var some []query.Node
	for i := 0; i < len(qs); i += n {
		some = append(some, qs[i])
	}
	return some
}

// FillPruneStore inserts ms into bk (InsertAll), then forgets every 41st
// memory from the third, so that a pruned search's index figures must
// follow forgets, and returns the contents of ms for PruneQueries.
func FillPruneStore(tb testing.TB, bk driver.Backend, ms []*driver.Memory) []string {
	tb.Helper()
	InsertAll(tb, bk, ms)
	err := bk.Update(context.Background(), func(tx driver.Tx) error {
		for id := int64(3); id <= int64(len(ms)); id += 41 {
			if err := tx.Delete(id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	contents := make([]string, len(ms))
	for i, m := range ms {
		contents[i] = m.Content
	}
	return contents
}

// SharedHits counts the hits of got that exact also returns, for a
// two-phase keyword search's approximate result against the exact one, and
// reports the first of them that got scores differently.
func SharedHits(got, exact []driver.Hit) (int, error) {
	n := 0
	for _, h := range got {
		k := slices.IndexFunc(exact, func(w driver.Hit) bool { return w.ID == h.ID })
		if k < 0 {
			continue
		}
		if exact[k].Score != h.Score {
			return n, fmt.Errorf("memory %d scored %.17g; exact: %.17g", h.ID, h.Score, exact[k].Score)
		}
		n++
	}
	return n, nil
}

// FormatHits renders hits as " id:score" with every digit of the score, for
// a test's message comparing two results that must be identical.
func FormatHits(hs []driver.Hit) string {
	var b strings.Builder
	for _, h := range hs {
		fmt.Fprintf(&b, " %d:%.17g", h.ID, h.Score)
	}
	return b.String()
}

package bolt

// The differential test against the sqlite backend on random queries.

import (
	"context"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memos-go/memos/backends/sqlite"
	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/query"
	"github.com/memos-go/memos/core/text"
)

// fuzzWords is the vocabulary of TestRandomQueriesRankLikeSQLite: words that
// share stems and prefixes, and two that no memory contains, so that NOTs
// whose positive side matches nothing occur often.
var fuzzWords = []string{"apple", "apples", "applied", "delta", "deltas", "echo", "echoes", "golf", "hotel", "hotels", "india", "zzz", "qqq"}

func fuzzQuery(r *rand.Rand, depth int) query.Node {
	if depth == 0 || r.IntN(3) == 0 {
		w := text.Tokenize(fuzzWords[r.IntN(len(fuzzWords))])[0]
		if r.IntN(6) == 0 {
			return &query.Term{Text: w[:1+r.IntN(len(w))], Prefix: true}
		}
		return &query.Term{Text: w}
	}
	kids := func() []query.Node {
		ks := make([]query.Node, 2+r.IntN(2))
		for i := range ks {
			ks[i] = fuzzQuery(r, depth-1)
		}
		return ks
	}
	switch r.IntN(3) {
	case 0:
		return &query.And{Children: kids()}
	case 1:
		return &query.Or{Children: kids()}
	}
	return &query.Not{Positive: fuzzQuery(r, depth-1), Negative: fuzzQuery(r, depth-1)}
}

// TestRandomQueriesRankLikeSQLite is a differential test of the two backends
// on random memories and random trees of terms and prefixes under AND, OR
// and NOT: bolt must return the ids sqlite returns, in the same order, with
// the same bm25 scores. (Phrases of several words and NEAR have one known
// difference, see the package documentation; TestKeywordMatchesFTS5 covers
// them.)
func TestRandomQueriesRankLikeSQLite(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	b, err := Open(ctx, Config{Path: filepath.Join(dir, "store.bolt")})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	s, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(dir, "store.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := rand.New(rand.NewPCG(10, 6))
	docs := make([]string, 40)
	for i := range docs {
		ws := make([]string, 1+r.IntN(8))
		for j := range ws {
			ws[j] = fuzzWords[r.IntN(len(fuzzWords)-2)] // never zzz or qqq
		}
		docs[i] = strings.Join(ws, " ")
	}
	for _, be := range []driver.Backend{b, s} {
		err := be.Update(ctx, func(tx driver.Tx) error {
			for _, c := range docs {
				m := &driver.Memory{
					Version: 1, Namespace: "default", Pool: driver.PoolMemory, Type: driver.TypeFact, Status: driver.StatusActive,
					Content: c, Significance: 5, Trust: driver.Trust{Level: driver.TrustCertain, Score: 1},
				}
				if err := tx.Insert(m); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	queries := 300
	if raceEnabled {
		queries = 60 // bleve is many times slower under the race detector
	}
	failures := 0
	for range queries {
		q := fuzzQuery(r, 3)
		want, err := s.SearchKeyword(ctx, q, driver.Filter{}, 100)
		if err != nil {
			t.Fatalf("sqlite %s: %v", q, err)
		}
		got, err := b.SearchKeyword(ctx, q, driver.Filter{}, 100)
		if err != nil {
			t.Fatalf("bolt %s: %v", q, err)
		}
		same := len(got) == len(want)
		for i := 0; same && i < len(got); i++ {
			same = got[i].ID == want[i].ID && math.Abs(got[i].Score-want[i].Score) <= 1e-9*math.Max(1, math.Abs(want[i].Score))
		}
		if !same {
			t.Errorf("%s: bolt %v, sqlite %v", q, got, want)
			if failures++; failures == 10 {
				t.Fatal("too many differences")
			}
		}
	}
}

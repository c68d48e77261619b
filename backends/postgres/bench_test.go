package postgres_test

import (
	"context"
	"testing"

	"github.com/memos-go/memos/backends/postgres"
	"github.com/memos-go/memos/core/bench/dataset"
	"github.com/memos-go/memos/core/corpus"
	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/query"
)

// BenchmarkKeywordCandidates measures how the candidates the GIN index
// proposes (and whose content core/text then evaluates) grow with the
// store, against the matches, for the synthetic workload's queries as the
// engine rewrites them (natural language: stop words dropped, terms
// OR-ed). Run it with
//
//	MEMOS_TEST_PG_DSN=... go test -run '^$' -bench KeywordCandidates -benchtime 1x ./backends/postgres/
//
// and read candidates/query and matches/query.
func BenchmarkKeywordCandidates(b *testing.B) {
	for _, size := range []int{1_000, 10_000, 100_000} {
		b.Run(corpus.FormatSize(size), func(b *testing.B) {
			ds, err := dataset.Synthetic(dataset.SyntheticOptions{Docs: size, Seed: 1})
			if err != nil {
				b.Fatal(err)
			}
			c := ds.Corpora[0]
			db := openTest(b, "candidates")
			defer db.Close()
			ctx := context.Background()
			for start := 0; start < len(c.Docs); start += 1000 {
				err := db.Update(ctx, func(tx driver.Tx) error {
					for _, d := range c.Docs[start:min(start+1000, len(c.Docs))] {
						m := &driver.Memory{Version: 1, Namespace: driver.DefaultNamespace, Pool: driver.PoolMemory, Type: driver.TypeFact,
							Content: d.Input.Content, Significance: 5, Trust: driver.Trust{Level: driver.TrustCertain, Score: 1}, Status: driver.StatusActive}
						if err := tx.Insert(m); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			qs := make([]query.Node, len(c.Queries))
			for i, q := range c.Queries {
				qs[i] = query.Natural(q.Text)
			}
			before := stats(b, db)
			searches := 0
			for b.Loop() {
				for _, q := range qs {
					if q == nil {
						continue
					}
					if _, err := db.SearchKeyword(ctx, q, driver.Filter{}, 50); err != nil {
						b.Fatal(err)
					}
					searches++
				}
			}
			after := stats(b, db)
			b.ReportMetric(float64(after[0]-before[0])/float64(searches), "candidates/query")
			b.ReportMetric(float64(after[1]-before[1])/float64(searches), "matches/query")
			b.ReportMetric(float64(after[0]-before[0])/float64(searches)/float64(size)*100, "%store/query")
		})
	}
}

func stats(b *testing.B, db *postgres.DB) [2]int64 {
	m, err := db.BackendStats(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	return [2]int64{m["keyword_candidates"].(int64), m["keyword_matches"].(int64)}
}

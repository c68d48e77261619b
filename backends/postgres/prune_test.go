package postgres_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/memos-go/memos/backends/postgres"
	"github.com/memos-go/memos/core/backendtest"
	"github.com/memos-go/memos/core/backendtest/devbench"
	"github.com/memos-go/memos/core/driver"
)

// TestPrunedSearch checks the two-phase keyword search against evaluating
// every candidate, as bolt's and sqlite's tests of the same name do, on
// one schema of dev turns (or the bench workload without the shared data)
// opened twice: with keyword_prune_rows -1 and with a small budget, so that
// many searches take two phases. For the dev questions and random ORs of
// words and phrases, unfiltered and filtered: a result the bound proves,
// or one that did not take two phases, is exactly the exact search's (ids,
// order, scores); an approximate result's hits that the exact search also
// returns have the same scores. Every 25th query follows a write through
// the exact handle.
func TestPrunedSearch(t *testing.T) {
	dsn := testDSN(t)
	ctx := context.Background()
	ms, _, err := backendtest.BenchWorkload(3000)
	if err != nil {
		t.Fatal(err)
	}
	// Real text: dev turns in the workload's memories (namespaces, types).
	questions := devbench.WithDevText(t, ms, devbench.DataDir)
	schema := schemaFor(t, dsn, t.Name())
	open := func(rows int) *postgres.DB {
		d, err := postgres.Open(ctx, postgres.Config{DSN: dsn, Schema: schema, KeywordPruneRows: rows})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		return d
	}
	exact, pruned := open(-1), open(150)
	contents := backendtest.FillPruneStore(t, exact, ms)

	// Every third query (all kinds stay): a search here is a few round
	// trips to the server.
	queries := backendtest.EveryNth(backendtest.PruneQueries(contents, questions, 300, 2), 3)
	filters := []driver.Filter{
		{},
		{Namespaces: []string{ms[0].Namespace}, Statuses: []driver.Status{driver.StatusActive}},
		{Types: []driver.Type{driver.TypeLesson}},
	}
	var proved, approx, whole int
	var overlap, overlapN float64
	for i, q := range queries {
		if i%25 == 24 {
			// A write through the other handle, as another process's: the
			// pruned handle's cached document frequencies must follow.
			err := exact.Update(ctx, func(tx driver.Tx) error {
				m := *ms[i%len(ms)]
				m.ID = 0
				return tx.Insert(&m)
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		f := filters[i%len(filters)]
		limit := []int{10, 30, 5}[i/len(filters)%3]
		before := pruneCounts(t, exact)
		want, err := exact.SearchKeyword(ctx, q, f, limit)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if after := pruneCounts(t, exact); after != before {
			t.Fatalf("%s: keyword_prune_rows -1 took two phases (%v → %v)", q, before, after)
		}
		before = pruneCounts(t, pruned)
		got, err := pruned.SearchKeyword(ctx, q, f, limit)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		after := pruneCounts(t, pruned)
		switch {
		case after[1] > before[1]: // approximate
			approx++
			n, err := backendtest.SharedHits(got, want)
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			if len(got) != limit {
				t.Fatalf("%s: an approximate result of %d hits for limit %d", q, len(got), limit)
			}
			if len(want) > 0 {
				overlap += float64(n) / float64(len(want))
				overlapN++
			}
			continue
		case after[0] > before[0]:
			proved++
		default:
			whole++
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s (limit %d, filter %+v):\n got %s\nwant %s", q, limit, f, backendtest.FormatHits(got), backendtest.FormatHits(want))
		}
	}
	t.Logf("%d queries: every candidate evaluated %d, proved %d, approximate %d (mean overlap with the exact top %.3f)",
		len(queries), whole, proved, approx, overlap/max(overlapN, 1))
	if proved == 0 || whole == 0 {
		t.Errorf("%d proved, %d whole: want searches of both kinds", proved, whole)
	}
}

func TestPruneRowsConfig(t *testing.T) {
	_, err := postgres.Open(context.Background(), postgres.Config{DSN: "postgres://127.0.0.1:1/x", KeywordPruneRows: -2})
	if !errors.Is(err, driver.ErrInvalid) || !strings.Contains(err.Error(), "keyword_prune_rows") {
		t.Fatalf("keyword_prune_rows -2: %v; want ErrInvalid naming the key", err)
	}
}

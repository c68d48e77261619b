package bolt

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memos-go/memos/core/backendtest"
	"github.com/memos-go/memos/core/backendtest/devbench"
	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/query"
)

// TestPrunedSearch checks the two-phase keyword search against scoring
// every match, on a real store of dev turns (or the bench workload without
// the shared data): for the dev questions and random ORs of words and
// phrases, unfiltered and filtered, with a small row budget so that many
// searches take two phases. Every result is exactly the exact search's
// (ids, order, scores), however it was answered; with keyword_prune_rows -1
// no search takes two phases.
func TestPrunedSearch(t *testing.T) {
	ctx := context.Background()
	n := 3000
	if raceEnabled {
		n = 1000 // see below: the race detector slows the index down many times
	}
	ms, _, err := backendtest.BenchWorkload(n)
	if err != nil {
		t.Fatal(err)
	}
	// Real text: dev turns in the workload's memories (namespaces, types).
	questions := devbench.WithDevText(t, ms, devbench.DataDir)
	path := filepath.Join(t.TempDir(), "store")
	d, err := Open(ctx, Config{Path: path, KeywordPruneRows: 150})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	contents := backendtest.FillPruneStore(t, d, ms)

	queries := backendtest.PruneQueries(contents, questions, 300, 2)
	if raceEnabled {
		// Every 40th query under the race detector (all kinds stay);
		// .ci/run runs them all without it.
		queries = backendtest.EveryNth(queries, 40)
	}
	filters := []driver.Filter{
		{},
		{Namespaces: []string{ms[0].Namespace}, Statuses: []driver.Status{driver.StatusActive}},
		{Types: []driver.Type{driver.TypeLesson}},
	}
	search := func(rows int, q query.Node, f driver.Filter, limit int) ([]driver.Hit, pruneOutcome) {
		t.Helper()
		d.pruneRows = rows // no other search runs
		var before [3]int64
		for k := range before {
			before[k] = d.pruneCounts[k].Load()
		}
		hits, err := d.SearchKeyword(ctx, q, f, limit)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		for k := range before {
			if d.pruneCounts[k].Load() != before[k] {
				return hits, pruneOutcome(k)
			}
		}
		t.Fatalf("%s: no outcome counted", q)
		return nil, 0
	}
	var outcomes [3]int
	for i, q := range queries {
		f := filters[i%len(filters)]
		limit := []int{10, 30, 5}[i/len(filters)%3]
		want, o := search(-1, q, f, limit)
		if o != pruneNotTried {
			t.Fatalf("%s: keyword_prune_rows -1 answered with outcome %d", q, o)
		}
		got, outcome := search(150, q, f, limit)
		outcomes[outcome]++
		if !slices.Equal(got, want) {
			t.Fatalf("%s (outcome %d, limit %d, filter %+v):\n got %s\nwant %s", q, outcome, limit, f, backendtest.FormatHits(got), backendtest.FormatHits(want))
		}
	}
	t.Logf("%d queries: not prunable %d, exact %d, proved %d",
		len(queries), outcomes[pruneNotTried], outcomes[pruneExact], outcomes[pruneProved])
	if outcomes[pruneProved] == 0 || outcomes[pruneExact] == 0 {
		t.Errorf("outcomes %v: want searches both proved and answered exactly", outcomes)
	}
}

func TestPruneRowsConfig(t *testing.T) {
	_, err := Open(context.Background(), Config{Path: filepath.Join(t.TempDir(), "store"), KeywordPruneRows: -2})
	if !errors.Is(err, driver.ErrInvalid) || !strings.Contains(err.Error(), "keyword_prune_rows") {
		t.Fatalf("keyword_prune_rows -2: %v; want ErrInvalid naming the key", err)
	}
}

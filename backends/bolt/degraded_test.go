package bolt

import (
	"context"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/query"
)

// A keyword search without the index (scanSearch) returns what the index
// returns: the same ids in the same order with the same bm25 scores, for
// random queries of every operator, with and without filters.
func TestScanSearchMatchesIndex(t *testing.T) {
	ctx := context.Background()
	d, err := Open(ctx, Config{Path: filepath.Join(t.TempDir(), "store"), KeywordPruneRows: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	r := rand.New(rand.NewPCG(3, 9))
	err = d.Update(ctx, func(tx driver.Tx) error {
		for i := range 200 {
			m := testMemory(randomDoc(r))
			if i%3 == 0 {
				m.Namespace = "project:other"
			}
			if i%7 == 0 {
				m.Status = driver.StatusArchived
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
	filters := []driver.Filter{
		{},
		{Namespaces: []string{driver.DefaultNamespace}, Statuses: []driver.Status{driver.StatusActive}},
		{Namespaces: []string{"project:other"}},
	}
	compared, nonEmpty := 0, 0
	for i := range 400 {
		q := randomQuery(r, 3)
		if query.Validate(q) != nil {
			continue
		}
		f := filters[i%len(filters)]
		want, err := d.SearchKeyword(ctx, q, f, 20)
		if err != nil {
			t.Fatalf("%s: indexed search: %v", q.String(), err)
		}
		cq, err := query.Compile(q)
		if err != nil {
			t.Fatal(err)
		}
		d.vis.RLock()
		got, err := d.scanSearch(ctx, cq, f, 20)
		d.vis.RUnlock()
		if err != nil {
			t.Fatalf("%s: search without the index: %v", q.String(), err)
		}
		if len(got) != len(want) {
			t.Fatalf("%s %+v: without the index %d hits %v, with it %d %v", q.String(), f, len(got), got, len(want), want)
		}
		for j := range want {
			if got[j].ID != want[j].ID || math.Abs(got[j].Score-want[j].Score) > 1e-9*math.Max(1, math.Abs(want[j].Score)) {
				t.Fatalf("%s %+v: hit %d without the index %+v, with it %+v", q.String(), f, j, got[j], want[j])
			}
		}
		compared++
		if len(want) > 0 {
			nonEmpty++
		}
	}
	t.Logf("%d queries compared, %d with hits", compared, nonEmpty)
	if compared < 300 || nonEmpty < 100 {
		t.Fatalf("compared %d queries, %d with hits; the test checks too little", compared, nonEmpty)
	}
}

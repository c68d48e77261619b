package backendtest

import (
	"slices"
	"testing"

	"github.com/memos-go/memos/core/driver"
)

// testConsolidationMerge checks what Engine.Consolidate's merge writes in
// one transaction: the survivor's next version, the duplicate's archived
// version, a derived_from edge, and access counts added by Touch. Archived
// memories leave active scans and the keyword index's active filter, the
// change log reports them archived (the vector index drops them), and
// history keeps the active version.
func testConsolidationMerge(t *testing.T, f *fixture) {
	surv := newMemory("Alice's home lab runs Proxmox on three nodes", withEmbedding("m", 1, 0))
	dup := newMemory("Alice's home lab runs Proxmox on three nodes.", withEmbedding("m", 1, 0))
	f.insert(t, surv, dup)
	before := f.seq(t)
	f.update(t, func(tx driver.Tx) error {
		next := nextVersion(surv, surv.Content)
		next.Entities = []string{"Alice", "Proxmox"}
		next.Metadata = map[string]any{"merged_from": []any{float64(dup.ID)}}
		if err := tx.Put(next); err != nil {
			return err
		}
		arch := nextVersion(dup, dup.Content)
		arch.Status = driver.StatusArchived
		if err := tx.Put(arch); err != nil {
			return err
		}
		if err := tx.Link(driver.Edge{From: surv.ID, To: dup.ID, Type: driver.EdgeDerivedFrom, Weight: 1, CreatedAt: at(3)}); err != nil {
			return err
		}
		for range 3 {
			if err := tx.Touch([]int64{surv.ID}, at(4)); err != nil {
				return err
			}
		}
		return nil
	})
	active := driver.Filter{Statuses: []driver.Status{driver.StatusActive}}
	if got := f.scanIDs(t, driver.ScanOptions{Filter: active}); !slices.Equal(got, []int64{surv.ID}) {
		t.Errorf("active scan after the merge = %v, want only the survivor %d", got, surv.ID)
	}
	if got := f.searchIDs(t, term("proxmox"), active, 10); !slices.Equal(got, []int64{surv.ID}) {
		t.Errorf("active keyword search after the merge = %v, want only the survivor %d", got, surv.ID)
	}
	var dupChange *driver.Change
	for _, c := range f.changes(t, before) {
		if c.ID == dup.ID {
			dupChange = &c
		}
	}
	if dupChange == nil || dupChange.Status != driver.StatusArchived {
		t.Errorf("the change log after the merge reports the duplicate as %+v, want archived", dupChange)
	}
	var hist []*driver.Memory
	f.view(t, func(tx driver.ReadTx) error {
		var err error
		hist, err = tx.History(dup.ID)
		return err
	})
	if len(hist) != 2 || hist[0].Status != driver.StatusActive || hist[1].Status != driver.StatusArchived {
		t.Errorf("the duplicate's history has %d versions; want its active version 1 and archived version 2", len(hist))
	}
	if got := f.get(t, surv.ID, 0); got.AccessCount != surv.AccessCount+3 || got.Version != 2 || len(got.Entities) != 2 {
		t.Errorf("survivor after the merge: version %d, %d accesses, entities %v; want version 2, %d accesses, both entities",
			got.Version, got.AccessCount, got.Entities, surv.AccessCount+3)
	}
	if es := f.edges(t, surv.ID); len(es) != 1 || es[0].To != dup.ID || es[0].Type != driver.EdgeDerivedFrom {
		t.Errorf("survivor edges after the merge = %+v", es)
	}
}

// testConsolidationPageRefresh checks a knowledge page's refresh in one
// transaction: a new version of the page, an edge to a new member and none
// to a former one; the keyword index sees only the new text.
func testConsolidationPageRefresh(t *testing.T, f *fixture) {
	a, b, c := newMemory("first member"), newMemory("second member"), newMemory("third member")
	page := newMemory("Knowledge page: about the alpha members", withPool(driver.PoolKnowledge), withType(driver.TypeKnowledge))
	f.insert(t, a, b, c, page)
	f.update(t, func(tx driver.Tx) error {
		for _, m := range []*driver.Memory{a, b} {
			if err := tx.Link(driver.Edge{From: page.ID, To: m.ID, Type: driver.EdgeDerivedFrom, Weight: 1, CreatedAt: at(2)}); err != nil {
				return err
			}
		}
		return nil
	})
	f.update(t, func(tx driver.Tx) error {
		if err := tx.Put(nextVersion(page, "Knowledge page: about the omega members")); err != nil {
			return err
		}
		if err := tx.Unlink(page.ID, a.ID, driver.EdgeDerivedFrom); err != nil {
			return err
		}
		return tx.Link(driver.Edge{From: page.ID, To: c.ID, Type: driver.EdgeDerivedFrom, Weight: 1, CreatedAt: at(3)})
	})
	var to []int64
	for _, e := range f.edges(t, page.ID) {
		to = append(to, e.To)
	}
	if !sameSet(to, []int64{b.ID, c.ID}) {
		t.Errorf("page edges after the refresh lead to %v, want %v", to, []int64{b.ID, c.ID})
	}
	if got := f.searchIDs(t, term("alpha"), driver.Filter{}, 10); len(got) != 0 {
		t.Errorf("the page's old text is still found: %v", got)
	}
	if got := f.searchIDs(t, term("omega"), driver.Filter{Pools: []driver.Pool{driver.PoolKnowledge}}, 10); !slices.Equal(got, []int64{page.ID}) {
		t.Errorf("the page's new text: %v, want %d", got, page.ID)
	}
}

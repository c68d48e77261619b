package backendtest

import (
	"slices"
	"testing"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/query"
)

// The governance cases: what the engine's review queue, forget-source and
// audit verification rely on from a backend.

// testQuarantineVisibility: a quarantined memory is stored, scanned and
// searched only when the filter asks for its status, and a new version that
// releases it (status active) makes it visible to a search for active
// memories; the change log reports each status.
func testQuarantineVisibility(t *testing.T, f *fixture) {
	active := newMemory("review queue lantern active")
	held := newMemory("review queue lantern held", withStatus(driver.StatusQuarantined))
	f.insert(t, active, held)
	q := &query.Term{Text: "lantern"}
	activeOnly := driver.Filter{Statuses: []driver.Status{driver.StatusActive}}
	both := driver.Filter{Statuses: []driver.Status{driver.StatusActive, driver.StatusQuarantined}}
	if got := f.searchIDs(t, q, activeOnly, 10); !slices.Equal(got, []int64{active.ID}) {
		t.Errorf("SearchKeyword for active memories = %v, want only %d", got, active.ID)
	}
	if got := f.searchIDs(t, q, both, 10); len(got) != 2 {
		t.Errorf("SearchKeyword for active and quarantined memories = %v, want both", got)
	}
	if got := f.scanIDs(t, driver.ScanOptions{Filter: driver.Filter{Statuses: []driver.Status{driver.StatusQuarantined}}}); !slices.Equal(got, []int64{held.ID}) {
		t.Errorf("Scan of quarantined memories = %v, want %d", got, held.ID)
	}
	seq := f.seq(t)
	rel := f.get(t, held.ID, 0)
	rel.Version++
	rel.Status = driver.StatusActive
	rel.UpdatedAt = at(5)
	f.put(t, rel)
	if got := f.searchIDs(t, q, activeOnly, 10); len(got) != 2 {
		t.Errorf("after the release, SearchKeyword for active memories = %v, want both", got)
	}
	ch := f.changes(t, seq)
	if len(ch) != 1 || ch[0].ID != held.ID || ch[0].Status != driver.StatusActive {
		t.Errorf("Changes after the release = %+v, want %d with status active", ch, held.ID)
	}
	if v1 := f.get(t, held.ID, 1); v1.Status != driver.StatusQuarantined {
		t.Errorf("version 1 of the released memory has status %s, want quarantined", v1.Status)
	}
}

// testDeleteDerivedCycle: deleting the memories of a derived_from cycle one
// after another removes every edge of each, from both ends, leaving the
// memory outside the cycle with no dangling edge.
func testDeleteDerivedCycle(t *testing.T, f *fixture) {
	src := newMemory("cycle source turn")
	a := newMemory("cycle member a")
	b := newMemory("cycle member b")
	keep := newMemory("cycle keeper")
	f.insert(t, src, a, b, keep)
	f.update(t, func(tx driver.Tx) error {
		for _, e := range []driver.Edge{
			{From: a.ID, To: src.ID}, {From: a.ID, To: b.ID}, {From: b.ID, To: a.ID}, {From: keep.ID, To: b.ID},
		} {
			e.Type, e.Weight, e.CreatedAt = driver.EdgeDerivedFrom, 1, at(1)
			if err := tx.Link(e); err != nil {
				return err
			}
		}
		return nil
	})
	if got := f.edges(t, b.ID); len(got) != 3 {
		t.Fatalf("Edges(b) = %+v, want 3 derived_from edges", got)
	}
	f.forget(t, src.ID)
	if got := f.edges(t, a.ID); len(got) != 2 {
		t.Errorf("after deleting the source, Edges(a) = %+v, want the two cycle edges", got)
	}
	f.forget(t, a.ID)
	if got := f.edges(t, b.ID); len(got) != 1 || got[0].From != keep.ID {
		t.Errorf("after deleting a, Edges(b) = %+v, want only keeper → b", got)
	}
	f.forget(t, b.ID)
	if got := f.edges(t, keep.ID); len(got) != 0 {
		t.Errorf("after deleting the cycle, Edges(keeper) = %+v, want none", got)
	}
}

// testAuditCoverage: the audit log outlives the memories it concerns (a
// Delete removes no entry), keeps every entry's Detail byte for byte
// (verification recomputes hashes over it), and numbers entries 1, 2, 3, …
// with no gaps, across transactions and a reopen.
func testAuditCoverage(t *testing.T, f *fixture) {
	if !hasAuditReader(t, f) {
		t.Skipf("%s does not implement driver.AuditReader", f.h.Name)
	}
	m := newMemory("audited then deleted")
	f.insert(t, m)
	details := []string{`{"version":1,"sha256":"00ff"}`, `{"note":"a\u00e9\n\"q\"","n":1.5e-7}`, ``}
	f.update(t, func(tx driver.Tx) error {
		for i, d := range details[:2] {
			if err := tx.AppendAudit(&driver.AuditEntry{Time: at(i), Action: "remember", MemoryID: m.ID, Detail: d, Hash: "h"}); err != nil {
				return err
			}
		}
		return nil
	})
	f.forget(t, m.ID)
	f.reopen(t)
	f.update(t, func(tx driver.Tx) error {
		return tx.AppendAudit(&driver.AuditEntry{Time: at(3), Action: "forget", MemoryID: m.ID, Detail: details[2], Hash: "h"})
	})
	got := readAudit(t, f)
	if len(got) != 3 {
		t.Fatalf("Audit after a Delete and a reopen returned %d entries, want 3", len(got))
	}
	for i, a := range got {
		if a.Seq != uint64(i+1) {
			t.Errorf("entry %d has Seq %d, want %d (no gaps)", i, a.Seq, i+1)
		}
		if a.Detail != details[i] || a.MemoryID != m.ID {
			t.Errorf("entry %d = %+v, want detail %q for memory %d", i, a, details[i], m.ID)
		}
	}
}

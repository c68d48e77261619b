package backendtest

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/memos-go/memos/core/driver"
)

// diffChange says how c differs from what the change log must report for
// m's current state, or "" when it does not.
func diffChange(m *driver.Memory, c driver.Change) string {
	switch {
	case c.ID != m.ID:
		return fmt.Sprintf("ID %d, want %d", c.ID, m.ID)
	case c.Deleted:
		return fmt.Sprintf("memory %d reported Deleted, but it is live", m.ID)
	case c.Namespace != m.Namespace || c.Pool != m.Pool || c.Status != m.Status:
		return fmt.Sprintf("memory %d: namespace/pool/status %s/%s/%s, want %s/%s/%s",
			m.ID, c.Namespace, c.Pool, c.Status, m.Namespace, m.Pool, m.Status)
	case c.Embedding.Model != m.Embedding.Model:
		return fmt.Sprintf("memory %d: embedding model %q, want %q", m.ID, c.Embedding.Model, m.Embedding.Model)
	}
	if msg := diffVector(m.Embedding.Vector, c.Embedding.Vector); msg != "" {
		return fmt.Sprintf("memory %d: embedding: %s", m.ID, msg)
	}
	return ""
}

// checkChanges fails the test unless cs reports exactly want (the latest
// state of each memory, in this order) with sequence numbers after since.
func checkChanges(t *testing.T, what string, since uint64, cs []driver.Change, want ...*driver.Memory) {
	t.Helper()
	if len(cs) != len(want) {
		t.Errorf("%s: %d changes %+v, want %d", what, len(cs), cs, len(want))
		return
	}
	for i, c := range cs {
		if c.Seq <= since {
			t.Errorf("%s: change %d has Seq %d, not after %d", what, i, c.Seq, since)
		}
		if i > 0 && c.Seq < cs[i-1].Seq {
			t.Errorf("%s: Seq %d after %d; want ascending Seq", what, c.Seq, cs[i-1].Seq)
		}
		if d := diffChange(want[i], c); d != "" {
			t.Errorf("%s: change %d: %s", what, i, d)
		}
	}
}

func testChangeLog(t *testing.T, f *fixture) {
	if s := f.seq(t); s != 0 {
		t.Errorf("Seq of a new store = %d, want 0", s)
	}
	if cs := f.changes(t, 0); len(cs) != 0 {
		t.Errorf("Changes(0) of a new store = %+v, want none", cs)
	}

	// Every write except Touch advances Seq.
	a := newMemory("memory a", withEmbedding("m1", 0.5, -0.5, float32(1)/3))
	b := newMemory("memory b", withNamespace("user:bob"))
	c := newMemory("memory c", withEmbedding("m1", 1, 0, 0), withPool(driver.PoolRaw), withType(driver.TypeTurn))
	var last uint64
	step := func(what string, fn func(tx driver.Tx) error) uint64 {
		t.Helper()
		f.update(t, fn)
		s := f.seq(t)
		if s <= last {
			t.Errorf("Seq after %s = %d, want more than %d", what, s, last)
		}
		last = s
		return s
	}
	for _, m := range []*driver.Memory{a, b, c} {
		step("Insert", func(tx driver.Tx) error { return tx.Insert(m) })
	}
	checkChanges(t, "Changes(0) after three inserts", 0, f.changes(t, 0), a, b, c)

	s1 := last
	b2 := nextVersion(b, "memory b, version 2")
	b2.Pool, b2.Status = driver.PoolKnowledge, driver.StatusQuarantined
	b2.Embedding = driver.Embedding{Model: "m2", Vector: []float32{0.25, 0.75}}
	step("Put", func(tx driver.Tx) error { return tx.Put(b2) })
	a2 := nextVersion(a, "memory a, version 2")
	a2.Namespace = "agent:planner"
	sA := step("Put", func(tx driver.Tx) error { return tx.Put(a2) })
	b3 := nextVersion(b2, "memory b, version 3")
	b3.Status = driver.StatusArchived
	step("Put", func(tx driver.Tx) error { return tx.Put(b3) })

	cs := f.changes(t, s1)
	checkChanges(t, fmt.Sprintf("Changes(%d) after Put b, Put a, Put b", s1), s1, cs, a2, b3)
	if len(cs) == 2 && cs[1].Seq != last {
		t.Errorf("the latest change has Seq %d, but Seq() = %d", cs[1].Seq, last)
	}
	checkChanges(t, fmt.Sprintf("Changes(%d)", sA), sA, f.changes(t, sA), b3)
	checkChanges(t, "Changes(Seq())", last, f.changes(t, last))
	checkChanges(t, "Changes(0)", 0, f.changes(t, 0), c, a2, b3)

	// Several memories changed in one transaction are each reported once.
	s2 := last
	d := newMemory("memory d")
	c2 := nextVersion(c, "memory c, version 2")
	step("a multi-write Update", func(tx driver.Tx) error {
		if err := tx.Put(c2); err != nil {
			return err
		}
		if err := tx.Insert(d); err != nil {
			return err
		}
		c3 := nextVersion(c2, "memory c, version 3")
		if err := tx.Put(c3); err != nil {
			return err
		}
		c2 = c3
		return nil
	})
	cs = f.changes(t, s2)
	if got := changeIDs(cs); !sameSet(got, []int64{c.ID, d.ID}) || len(got) != 2 {
		t.Errorf("Changes(%d) after one Update touching c and d lists ids %v, want %d and %d once each", s2, got, c.ID, d.ID)
	}
	for _, ch := range cs {
		want := map[int64]*driver.Memory{c.ID: c2, d.ID: d}[ch.ID]
		if want != nil {
			if msg := diffChange(want, ch); msg != "" {
				t.Errorf("Changes(%d): %s", s2, msg)
			}
		}
	}

	s3 := last
	step("Delete", func(tx driver.Tx) error { return tx.Delete(b.ID) })
	f.noteForgotten(b.ID, b3.Content)
	cs = f.changes(t, s3)
	if len(cs) != 1 || cs[0].ID != b.ID || !cs[0].Deleted || cs[0].Seq <= s3 {
		t.Errorf("Changes(%d) after Delete = %+v, want one Deleted entry for %d", s3, cs, b.ID)
	}
	for _, ch := range f.changes(t, 0) {
		if ch.ID == b.ID && !ch.Deleted {
			t.Errorf("Changes(0) lists deleted memory %d as live", b.ID)
		}
	}

	// The other writes advance Seq too.
	step("Link", func(tx driver.Tx) error {
		return tx.Link(driver.Edge{From: a.ID, To: c.ID, Type: driver.EdgeRelatesTo, Weight: 1, CreatedAt: base})
	})
	step("Unlink", func(tx driver.Tx) error { return tx.Unlink(a.ID, c.ID, driver.EdgeRelatesTo) })
	step("SetMeta", func(tx driver.Tx) error { return tx.SetMeta("k", "v") })
	step("AppendAudit", func(tx driver.Tx) error {
		return tx.AppendAudit(&driver.AuditEntry{Time: base, Action: "test", Hash: "h"})
	})

	// Changes stops at fn's error and returns it.
	stop := errors.New("stop")
	n := 0
	f.view(t, func(tx driver.ReadTx) error {
		err := tx.Changes(0, func(driver.Change) error { n++; return stop })
		if !errors.Is(err, stop) || n != 1 {
			t.Errorf("Changes whose fn fails returned %v after %d calls, want fn's error after 1", err, n)
		}
		return nil
	})
}

func changeIDs(cs []driver.Change) []int64 {
	ids := make([]int64, len(cs))
	for i, c := range cs {
		ids[i] = c.ID
	}
	return slices.Clip(ids)
}

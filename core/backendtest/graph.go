package backendtest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/memos-go/memos/core/driver"
)

func testEdges(t *testing.T, f *fixture) {
	a, b, c := newMemory("node a"), newMemory("node b"), newMemory("node c")
	f.insert(t, a, b, c)
	edge := func(from, to *driver.Memory, ty driver.EdgeType, w float64, n int, src string) driver.Edge {
		return driver.Edge{From: from.ID, To: to.ID, Type: ty, Weight: w, CreatedAt: at(n), Source: src}
	}
	abRel := edge(a, b, driver.EdgeRelatesTo, 0.5, 1, "conversation:1")
	abSup := edge(a, b, driver.EdgeSupports, 1, 2, "")
	abCites := edge(a, b, "cites", 0.1234567890123, 3, "file:notes.md")
	acDer := edge(a, c, driver.EdgeDerivedFrom, 0, 4, "consolidate")
	caRel := edge(c, a, driver.EdgeRelatesTo, 0.75, 5, "")
	bcPre := edge(b, c, driver.EdgeTemporalPrecedes, 2.5, 6, "")
	f.update(t, func(tx driver.Tx) error {
		// Linked out of order: Edges must sort.
		for _, e := range []driver.Edge{bcPre, caRel, abSup, acDer, abRel, abCites} {
			if err := tx.Link(e); err != nil {
				return err
			}
		}
		return nil
	})
	checkEdges(t, "Edges(a)", f.edges(t, a.ID), []driver.Edge{abCites, abRel, abSup, acDer, caRel})
	checkEdges(t, "Edges(b)", f.edges(t, b.ID), []driver.Edge{abCites, abRel, abSup, bcPre})
	checkEdges(t, "Edges(c)", f.edges(t, c.ID), []driver.Edge{acDer, bcPre, caRel})

	// Linking the same (From, To, Type) replaces the edge.
	abRel2 := edge(a, b, driver.EdgeRelatesTo, 0.9, 9, "conversation:2")
	f.update(t, func(tx driver.Tx) error { return tx.Link(abRel2) })
	checkEdges(t, "Edges(a) after relinking", f.edges(t, a.ID), []driver.Edge{abCites, abRel2, abSup, acDer, caRel})

	// A new version of an endpoint keeps its edges.
	f.put(t, nextVersion(a, "node a, second version"))
	checkEdges(t, "Edges(a) after Put", f.edges(t, a.ID), []driver.Edge{abCites, abRel2, abSup, acDer, caRel})

	f.update(t, func(tx driver.Tx) error { return tx.Unlink(a.ID, b.ID, driver.EdgeSupports) })
	checkEdges(t, "Edges(b) after Unlink", f.edges(t, b.ID), []driver.Edge{abCites, abRel2, bcPre})

	f.update(t, func(tx driver.Tx) error {
		wantErr(t, "Unlink of a removed edge", tx.Unlink(a.ID, b.ID, driver.EdgeSupports), driver.ErrNotFound)
		wantErr(t, "Unlink in the wrong direction", tx.Unlink(b.ID, a.ID, driver.EdgeRelatesTo), driver.ErrNotFound)
		wantErr(t, "Unlink of an unknown type", tx.Unlink(a.ID, c.ID, driver.EdgeContradicts), driver.ErrNotFound)
		wantErr(t, "Unlink from an unknown memory", tx.Unlink(missingID, a.ID, driver.EdgeRelatesTo), driver.ErrNotFound)
		wantErr(t, "Link from an unknown memory", tx.Link(driver.Edge{From: missingID, To: a.ID, Type: driver.EdgeRelatesTo, Weight: 1, CreatedAt: base}), driver.ErrNotFound)
		wantErr(t, "Link to an unknown memory", tx.Link(driver.Edge{From: a.ID, To: missingID, Type: driver.EdgeRelatesTo, Weight: 1, CreatedAt: base}), driver.ErrNotFound)
		return nil
	})
	checkEdges(t, "Edges(a) after rejected writes", f.edges(t, a.ID), []driver.Edge{abCites, abRel2, acDer, caRel})

	// Linking to a deleted memory is linking to an unknown one.
	f.forget(t, c.ID)
	f.update(t, func(tx driver.Tx) error {
		wantErr(t, "Link to a deleted memory", tx.Link(driver.Edge{From: a.ID, To: c.ID, Type: driver.EdgeRelatesTo, Weight: 1, CreatedAt: base}), driver.ErrNotFound)
		return nil
	})
	checkEdges(t, "Edges(a) after deleting c", f.edges(t, a.ID), []driver.Edge{abCites, abRel2})
}

func testMeta(t *testing.T, f *fixture) {
	f.view(t, func(tx driver.ReadTx) error {
		_, err := tx.Meta("embedder.model")
		wantErr(t, "Meta of a missing key", err, driver.ErrNotFound)
		return nil
	})
	f.update(t, func(tx driver.Tx) error {
		if err := tx.SetMeta("embedder.model", "hash-v1-256"); err != nil {
			return err
		}
		if v, err := tx.Meta("embedder.model"); err != nil || v != "hash-v1-256" {
			t.Errorf("Meta inside the writing transaction = %q, %v; want hash-v1-256", v, err)
		}
		if err := tx.SetMeta("schema", "1"); err != nil {
			return err
		}
		return tx.SetMeta("empty", "")
	})
	f.update(t, func(tx driver.Tx) error { return tx.SetMeta("schema", "2 — ünïcode") })
	f.view(t, func(tx driver.ReadTx) error {
		for k, want := range map[string]string{"embedder.model": "hash-v1-256", "schema": "2 — ünïcode", "empty": ""} {
			if got, err := tx.Meta(k); err != nil || got != want {
				t.Errorf("Meta(%q) = %q, %v; want %q", k, got, err, want)
			}
		}
		_, err := tx.Meta("Schema")
		wantErr(t, "Meta keys are case-sensitive: Meta(\"Schema\")", err, driver.ErrNotFound)
		return nil
	})
}

func testAudit(t *testing.T, f *fixture) {
	m := newMemory("audited memory")
	f.insert(t, m)
	entries := []*driver.AuditEntry{
		{Time: at(1), Action: "remember", MemoryID: m.ID, Detail: `{"source":"cli"}`, PrevHash: "", Hash: "aa01"},
		{Time: at(2), Action: "quarantine.release", MemoryID: m.ID, Detail: `{"by":"zoë"}`, PrevHash: "aa01", Hash: "bb02"},
		{Time: at(3), Action: "config.change", PrevHash: "bb02", Hash: "cc03"},
	}
	hasReader := hasAuditReader(t, f)
	if hasReader {
		if got := readAudit(t, f); len(got) != 0 {
			t.Errorf("Audit of a new store = %+v, want no entries", got)
		}
	}
	f.update(t, func(tx driver.Tx) error {
		for _, e := range entries[:2] {
			if err := tx.AppendAudit(e); err != nil {
				return err
			}
		}
		return nil
	})
	f.update(t, func(tx driver.Tx) error { return tx.AppendAudit(entries[2]) })
	var prev uint64
	for i, e := range entries {
		if e.Seq <= prev {
			t.Errorf("AppendAudit assigned Seq %d to entry %d after %d; want increasing sequence numbers", e.Seq, i, prev)
		}
		prev = e.Seq
	}
	if !hasReader {
		t.Logf("%s does not implement driver.AuditReader; only Seq assignment was checked", f.h.Name)
		return
	}
	got := readAudit(t, f)
	if len(got) != len(entries) {
		t.Fatalf("Audit returned %d entries, want %d", len(got), len(entries))
	}
	for i, want := range entries {
		if d := diffAudit(*want, got[i]); d != "" {
			t.Errorf("Audit entry %d: %s", i, d)
		}
	}
	stop := errors.New("stop")
	n := 0
	f.view(t, func(tx driver.ReadTx) error {
		err := tx.(driver.AuditReader).Audit(func(driver.AuditEntry) error { n++; return stop })
		if !errors.Is(err, stop) || n != 1 {
			t.Errorf("Audit whose fn fails returned %v after %d calls, want fn's error after 1", err, n)
		}
		return nil
	})
}

// hasAuditReader reports whether the backend's read transactions implement
// driver.AuditReader.
func hasAuditReader(t testing.TB, f *fixture) bool {
	t.Helper()
	var ok bool
	f.view(t, func(tx driver.ReadTx) error {
		_, ok = tx.(driver.AuditReader)
		return nil
	})
	return ok
}

// readAudit lists the audit log; the backend must implement AuditReader.
func readAudit(t testing.TB, f *fixture) []driver.AuditEntry {
	t.Helper()
	var es []driver.AuditEntry
	f.view(t, func(tx driver.ReadTx) error {
		return tx.(driver.AuditReader).Audit(func(e driver.AuditEntry) error {
			es = append(es, e)
			return nil
		})
	})
	return es
}

func diffAudit(want, got driver.AuditEntry) string {
	if msg := diffTime(want.Time, got.Time); msg != "" {
		return "Time: " + msg
	}
	want.Time = got.Time
	if want != got {
		return "got " + sprintEntry(got) + ", want " + sprintEntry(want)
	}
	return ""
}

func sprintEntry(e driver.AuditEntry) string {
	return fmt.Sprintf("{Seq:%d Action:%q MemoryID:%d Detail:%q PrevHash:%q Hash:%q}", e.Seq, e.Action, e.MemoryID, e.Detail, e.PrevHash, e.Hash)
}

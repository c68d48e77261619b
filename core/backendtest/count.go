package backendtest

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/memos-go/memos/core/driver"
)

// facetKey is the facets a FacetCount groups by.
type facetKey struct {
	ns     string
	pool   driver.Pool
	typ    driver.Type
	status driver.Status
}

// testCount checks driver.Counter against what a Scan of every memory
// says: counts per namespace, pool, type and status, their versions and
// active embeddings of one model and dimension, and the edges between
// memories of the namespaces asked for; for every namespace, some, one and
// none; after new versions that move memories between groups, and a
// forget; and inside a write transaction, which sees its own writes.
func testCount(t *testing.T, f *fixture) {
	var ok bool
	f.view(t, func(tx driver.ReadTx) error { _, ok = tx.(driver.Counter); return nil })
	if !ok {
		t.Logf("%s does not implement driver.Counter; nothing to check", f.h.Name)
		return
	}
	namespaces := []string{driver.DefaultNamespace, "team:web", "project:other"}
	statuses := []driver.Status{driver.StatusActive, driver.StatusQuarantined, driver.StatusArchived}
	var ms []*driver.Memory
	for i := range 60 {
		m := newMemory(fmt.Sprintf("counted memory %d", i))
		m.Namespace = namespaces[i%3]
		m.Pool = []driver.Pool{driver.PoolMemory, driver.PoolRaw, driver.PoolKnowledge}[i%5%3]
		m.Type = []driver.Type{driver.TypeFact, driver.TypeEvent}[i%7%2]
		m.Status = statuses[i%4%3]
		switch i % 3 {
		case 0:
			m.Embedding = driver.Embedding{Model: "count-model", Vector: []float32{1, 0}}
		case 1:
			m.Embedding = driver.Embedding{Model: "count-model", Vector: []float32{1, 0, 0}} // another dimension
		}
		ms = append(ms, m)
	}
	f.insert(t, ms...)
	f.update(t, func(tx driver.Tx) error {
		for i := 0; i+7 < len(ms); i += 4 {
			if err := tx.Link(driver.Edge{From: ms[i].ID, To: ms[i+7].ID, Type: driver.EdgeRelatesTo, Weight: 1, CreatedAt: base}); err != nil {
				return err
			}
		}
		return tx.Link(driver.Edge{From: ms[0].ID, To: ms[7].ID, Type: driver.EdgeSupports, Weight: 1, CreatedAt: base})
	})
	check := func(when string) {
		t.Helper()
		f.view(t, func(tx driver.ReadTx) error { checkCounts(t, when, tx); return nil })
	}
	check("after inserts")
	for i, m := range ms[:20] {
		next := nextVersion(f.get(t, m.ID, 0), m.Content+", changed")
		next.Status = statuses[(i+1)%3]
		next.Pool = driver.PoolKnowledge
		if i%5 == 0 {
			next.Namespace = "team:web"
		}
		f.put(t, next)
	}
	f.forget(t, ms[21].ID)
	check("after new versions and a forget")
	f.update(t, func(tx driver.Tx) error {
		if err := tx.Insert(newMemory("counted inside the write", withNamespace("team:web"), withStatus(driver.StatusArchived))); err != nil {
			return err
		}
		checkCounts(t, "inside a write transaction", tx)
		return nil
	})
}

// checkCounts compares tx's counts with those of a Scan.
func checkCounts(t *testing.T, when string, tx driver.ReadTx) {
	t.Helper()
	c := tx.(driver.Counter)
	for _, nss := range [][]string{nil, {driver.DefaultNamespace, "team:web"}, {"project:other"}, {"nowhere"}, {}} {
		want := map[facetKey]driver.FacetCount{}
		in := map[int64]bool{}
		var all []*driver.Memory
		if err := tx.Scan(driver.ScanOptions{}, func(m *driver.Memory) error { all = append(all, m); return nil }); err != nil {
			t.Fatalf("%s: Scan: %v", when, err)
		}
		for _, m := range all {
			if nss != nil && !slices.Contains(nss, m.Namespace) {
				continue
			}
			in[m.ID] = true
			k := facetKey{m.Namespace, m.Pool, m.Type, m.Status}
			fc := want[k]
			fc.Namespace, fc.Pool, fc.Type, fc.Status = k.ns, k.pool, k.typ, k.status
			fc.Memories++
			fc.Versions += m.Version
			if m.Status == driver.StatusActive && m.Embedding.Model == "count-model" && m.Embedding.Dim() == 2 {
				fc.Embedded++
			}
			want[k] = fc
		}
		fcs, err := c.Count(driver.CountOptions{Namespaces: nss, Model: "count-model", Dim: 2})
		if err != nil {
			t.Fatalf("%s: Count(%q): %v", when, nss, err)
		}
		got := map[facetKey]driver.FacetCount{}
		for _, fc := range fcs {
			k := facetKey{fc.Namespace, fc.Pool, fc.Type, fc.Status}
			if _, dup := got[k]; dup {
				t.Errorf("%s: Count(%q) returned %+v twice", when, nss, k)
			}
			got[k] = fc
		}
		if !maps.Equal(got, want) {
			t.Errorf("%s: Count(%q) =\n%v\nwant (from Scan)\n%v", when, nss, got, want)
		}
		edges := map[driver.Edge]bool{}
		for _, m := range all {
			es, err := tx.Edges(m.ID)
			if err != nil {
				t.Fatalf("%s: Edges: %v", when, err)
			}
			for _, e := range es {
				if in[e.From] && in[e.To] {
					edges[driver.Edge{From: e.From, To: e.To, Type: e.Type}] = true
				}
			}
		}
		if n, err := c.CountEdges(nss); err != nil || n != len(edges) {
			t.Errorf("%s: CountEdges(%q) = %d, %v; want %d", when, nss, n, err, len(edges))
		}
	}
}

// testAuditOf checks driver.AuditMemoryReader against the whole log: each
// memory's entries, and those about no one memory (id 0), in Seq order,
// and a read that fn stops.
func testAuditOf(t *testing.T, f *fixture) {
	if !implements[driver.AuditMemoryReader](t, f, "AuditMemoryReader") {
		return
	}
	a, b := newMemory("audited a"), newMemory("audited b")
	f.insert(t, a, b)
	ids := []int64{a.ID, 0, b.ID, a.ID, a.ID, 0, b.ID, a.ID}
	for i, id := range ids {
		f.update(t, func(tx driver.Tx) error {
			return tx.AppendAudit(&driver.AuditEntry{Time: at(i), Action: "remember", MemoryID: id, Detail: fmt.Sprintf(`{"n":%d}`, i), Hash: fmt.Sprint(i)})
		})
	}
	f.view(t, func(tx driver.ReadTx) error {
		log := auditLog(t, tx)
		ar := tx.(driver.AuditMemoryReader)
		for _, id := range []int64{a.ID, b.ID, 0, b.ID + 1000} {
			want := slices.DeleteFunc(slices.Clone(log), func(e driver.AuditEntry) bool { return e.MemoryID != id })
			checkAuditRead(t, fmt.Sprintf("AuditOf(%d)", id), func(fn func(driver.AuditEntry) error) error { return ar.AuditOf(id, fn) }, want)
		}
		return nil
	})
}

// testAuditBefore checks driver.AuditTailReader against the whole log:
// every entry below a sequence number (and every entry, for 0), newest
// first, also across the backend's pages, and a read that fn stops.
func testAuditBefore(t *testing.T, f *fixture) {
	if !implements[driver.AuditTailReader](t, f, "AuditTailReader") {
		return
	}
	m := newMemory("audited")
	f.insert(t, m)
	// More entries than a page of a backend that reads in pages of 256.
	f.update(t, func(tx driver.Tx) error {
		for i := range 600 {
			id := int64(0)
			if i%3 == 0 {
				id = m.ID
			}
			if err := tx.AppendAudit(&driver.AuditEntry{Time: at(i), Action: "remember", MemoryID: id, Detail: fmt.Sprintf(`{"n":%d}`, i), Hash: fmt.Sprint(i)}); err != nil {
				return err
			}
		}
		return nil
	})
	f.view(t, func(tx driver.ReadTx) error {
		log := auditLog(t, tx)
		ar := tx.(driver.AuditTailReader)
		last := log[len(log)-1].Seq
		for _, before := range []uint64{0, last + 1, last, log[len(log)/2].Seq, log[1].Seq, log[0].Seq, 1} {
			var want []driver.AuditEntry
			for i := len(log) - 1; i >= 0; i-- {
				if before == 0 || log[i].Seq < before {
					want = append(want, log[i])
				}
			}
			checkAuditRead(t, fmt.Sprintf("AuditBefore(%d)", before), func(fn func(driver.AuditEntry) error) error { return ar.AuditBefore(before, fn) }, want)
		}
		return nil
	})
}

// testAuditBound checks driver.AuditBindingReader against the whole log:
// for each memory, the entries about no one memory whose detail lists it
// (driver.BoundIDs), in Seq order, and none of the others; and a read that
// fn stops.
func testAuditBound(t *testing.T, f *fixture) {
	if !implements[driver.AuditBindingReader](t, f, "AuditBindingReader") {
		return
	}
	a, b, c := newMemory("bound a"), newMemory("bound b"), newMemory("bound c")
	f.insert(t, a, b, c)
	details := []struct {
		id     int64
		detail string
	}{
		{0, fmt.Sprintf(`{"memories":[{"id":%d,"version":1},{"id":%d,"version":1}]}`, a.ID, b.ID)},
		{a.ID, fmt.Sprintf(`{"memories":[{"id":%d}]}`, c.ID)}, // about a: binds no one in a batch
		{0, `{"n":1}`},
		{0, fmt.Sprintf(`{"memories":[{"id":%d},{"id":%d},{"id":%d},{"id":"x"},7,{"id":1.5}],"note":"ok"}`, b.ID, c.ID, b.ID)},
		{0, `{"memories":"none"}`},
		{0, ""},
		{0, fmt.Sprintf(`{"reason":"batch","memories":[{"namespace":"default","id":%d}]}`, a.ID)},
	}
	f.update(t, func(tx driver.Tx) error {
		for i, d := range details {
			if err := tx.AppendAudit(&driver.AuditEntry{Time: at(i), Action: "remember-batch", MemoryID: d.id, Detail: d.detail, Hash: fmt.Sprint(i)}); err != nil {
				return err
			}
		}
		return nil
	})
	f.view(t, func(tx driver.ReadTx) error {
		log := auditLog(t, tx)
		br := tx.(driver.AuditBindingReader)
		for _, id := range []int64{a.ID, b.ID, c.ID, c.ID + 1000, 0} {
			want := slices.DeleteFunc(slices.Clone(log), func(e driver.AuditEntry) bool { return !slices.Contains(driver.BoundIDs(&e), id) })
			checkAuditRead(t, fmt.Sprintf("AuditBound(%d)", id), func(fn func(driver.AuditEntry) error) error { return br.AuditBound(id, fn) }, want)
		}
		return nil
	})
}

// implements reports whether the backend's read transactions implement T
// (named name), logging that there is nothing to check when they do not.
func implements[T any](t *testing.T, f *fixture, name string) bool {
	var ok bool
	f.view(t, func(tx driver.ReadTx) error { _, ok = tx.(T); return nil })
	if !ok {
		t.Logf("%s does not implement driver.%s; nothing to check", f.h.Name, name)
	}
	return ok
}

// auditLog returns the whole audit log read through tx.
func auditLog(t *testing.T, tx driver.ReadTx) []driver.AuditEntry {
	t.Helper()
	var log []driver.AuditEntry
	if err := tx.(driver.AuditReader).Audit(func(e driver.AuditEntry) error { log = append(log, e); return nil }); err != nil {
		t.Fatalf("Audit: %v", err)
	}
	return log
}

// checkAuditRead checks that read (an audit read named what) hands its fn
// the entries want, in order, and that it stops with fn's error after the
// first entry.
func checkAuditRead(t *testing.T, what string, read func(func(driver.AuditEntry) error) error, want []driver.AuditEntry) {
	t.Helper()
	var got []driver.AuditEntry
	if err := read(func(e driver.AuditEntry) error { got = append(got, e); return nil }); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if len(got) != len(want) {
		t.Fatalf("%s returned %d entries, want %d", what, len(got), len(want))
	}
	for i := range want {
		if d := diffAudit(want[i], got[i]); d != "" || got[i].Seq != want[i].Seq {
			t.Errorf("%s entry %d: seq %d, want %d %s", what, i, got[i].Seq, want[i].Seq, d)
		}
	}
	if len(want) == 0 {
		return
	}
	stop, n := errors.New("stop"), 0
	if err := read(func(driver.AuditEntry) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
		t.Errorf("%s whose fn fails returned %v after %d calls, want fn's error after 1", what, err, n)
	}
}

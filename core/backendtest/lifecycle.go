package backendtest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/memos-go/memos/core/driver"
)

// snapshot is everything a store holds that the suite can read back.
type snapshot struct {
	current map[int64]*driver.Memory
	history map[int64][]*driver.Memory
	edges   map[int64][]driver.Edge
	seq     uint64
	changes []driver.Change
	meta    map[string]string   // the metaKeys that exist
	audit   []driver.AuditEntry // nil without AuditReader
}

var metaKeys = []string{"k", "k2", "embedder.model"}

func takeSnapshot(t testing.TB, f *fixture) *snapshot {
	t.Helper()
	s := &snapshot{
		current: map[int64]*driver.Memory{},
		history: map[int64][]*driver.Memory{},
		edges:   map[int64][]driver.Edge{},
		meta:    map[string]string{},
	}
	f.view(t, func(tx driver.ReadTx) error {
		var ids []int64
		if err := tx.Scan(driver.ScanOptions{}, func(m *driver.Memory) error {
			s.current[m.ID] = m
			ids = append(ids, m.ID)
			return nil
		}); err != nil {
			return err
		}
		for _, id := range ids {
			h, err := tx.History(id)
			if err != nil {
				return err
			}
			s.history[id] = h
			if s.edges[id], err = tx.Edges(id); err != nil {
				return err
			}
		}
		var err error
		if s.seq, err = tx.Seq(); err != nil {
			return err
		}
		if err := tx.Changes(0, func(c driver.Change) error {
			s.changes = append(s.changes, c)
			return nil
		}); err != nil {
			return err
		}
		for _, k := range metaKeys {
			v, err := tx.Meta(k)
			switch {
			case err == nil:
				s.meta[k] = v
			case !errors.Is(err, driver.ErrNotFound):
				return err
			}
		}
		if r, ok := tx.(driver.AuditReader); ok {
			s.audit = []driver.AuditEntry{}
			return r.Audit(func(e driver.AuditEntry) error {
				s.audit = append(s.audit, e)
				return nil
			})
		}
		return nil
	})
	return s
}

// compareSnapshots fails the test where got differs from want.
func compareSnapshots(t *testing.T, what string, want, got *snapshot) {
	t.Helper()
	ids := func(m map[int64]*driver.Memory) []int64 { return sorted(slices.Collect(maps.Keys(m))) }
	if w, g := ids(want.current), ids(got.current); !slices.Equal(w, g) {
		t.Errorf("%s: memories %v, want %v", what, g, w)
	}
	for id, w := range want.current {
		if d := diffMemory(w, got.current[id]); len(d) > 0 {
			t.Errorf("%s: memory %d:\n  %s", what, id, strings.Join(d, "\n  "))
		}
		wh, gh := want.history[id], got.history[id]
		if len(wh) != len(gh) {
			t.Errorf("%s: memory %d has %d versions, want %d", what, id, len(gh), len(wh))
			continue
		}
		for i := range wh {
			if d := diffMemory(wh[i], gh[i]); len(d) > 0 {
				t.Errorf("%s: memory %d version %d:\n  %s", what, id, i+1, strings.Join(d, "\n  "))
			}
		}
		checkEdges(t, fmt.Sprintf("%s: Edges(%d)", what, id), got.edges[id], want.edges[id])
	}
	if want.seq != got.seq {
		t.Errorf("%s: Seq %d, want %d", what, got.seq, want.seq)
	}
	if len(want.changes) != len(got.changes) {
		t.Errorf("%s: Changes(0) has %d entries, want %d", what, len(got.changes), len(want.changes))
	} else {
		for i, w := range want.changes {
			g := got.changes[i]
			if w.Seq != g.Seq || w.ID != g.ID || w.Deleted != g.Deleted || w.Namespace != g.Namespace ||
				w.Pool != g.Pool || w.Status != g.Status || w.Embedding.Model != g.Embedding.Model ||
				diffVector(w.Embedding.Vector, g.Embedding.Vector) != "" {
				t.Errorf("%s: Changes(0)[%d] = %+v, want %+v", what, i, g, w)
			}
		}
	}
	if !maps.Equal(want.meta, got.meta) {
		t.Errorf("%s: meta %v, want %v", what, got.meta, want.meta)
	}
	if len(want.audit) != len(got.audit) {
		t.Errorf("%s: %d audit entries, want %d", what, len(got.audit), len(want.audit))
	} else {
		for i := range want.audit {
			if d := diffAudit(want.audit[i], got.audit[i]); d != "" {
				t.Errorf("%s: audit entry %d: %s", what, i, d)
			}
		}
	}
}

func testAtomicity(t *testing.T, f *fixture) {
	a := newMemory("stable alpha content", withEmbedding("m", 1, 0))
	b := newMemory("stable beta content")
	c := newMemory("doomed gamma content")
	f.insert(t, a, b, c)
	f.update(t, func(tx driver.Tx) error {
		if err := tx.Link(driver.Edge{From: a.ID, To: b.ID, Type: driver.EdgeRelatesTo, Weight: 1, CreatedAt: base}); err != nil {
			return err
		}
		if err := tx.AppendAudit(&driver.AuditEntry{Time: base, Action: "remember", MemoryID: a.ID, Hash: "h1"}); err != nil {
			return err
		}
		return tx.SetMeta("k", "before")
	})
	before := takeSnapshot(t, f)

	boom := errors.New("boom")
	err := f.b.Update(context.Background(), func(tx driver.Tx) error {
		for _, step := range []struct {
			name string
			fn   func() error
		}{
			{"Insert", func() error { return tx.Insert(newMemory("rollbackonly phantom memory")) }},
			{"Put", func() error { return tx.Put(nextVersion(a, "rewritten rollbackonly alpha")) }},
			{"Link", func() error {
				return tx.Link(driver.Edge{From: b.ID, To: a.ID, Type: driver.EdgeSupports, Weight: 1, CreatedAt: base})
			}},
			{"Unlink", func() error { return tx.Unlink(a.ID, b.ID, driver.EdgeRelatesTo) }},
			{"Delete", func() error { return tx.Delete(c.ID) }},
			{"Touch", func() error { return tx.Touch([]int64{a.ID, b.ID}, at(50)) }},
			{"SetMeta", func() error { return tx.SetMeta("k", "after") }},
			{"SetMeta", func() error { return tx.SetMeta("k2", "new") }},
			{"AppendAudit", func() error {
				return tx.AppendAudit(&driver.AuditEntry{Time: at(1), Action: "forget", MemoryID: c.ID, PrevHash: "h1", Hash: "h2"})
			}},
		} {
			if err := step.fn(); err != nil {
				t.Errorf("%s inside the failing transaction: %v", step.name, err)
			}
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Errorf("Update whose fn fails returned %v, want fn's error", err)
	}
	compareSnapshots(t, "after a failed Update", before, takeSnapshot(t, f))
	for _, q := range []string{"rollbackonly", "phantom", "rewritten"} {
		if ids := f.searchIDs(t, term(q), driver.Filter{}, 10); len(ids) != 0 {
			t.Errorf("search %q after a failed Update returned %v, want nothing", q, ids)
		}
	}
	if ids := f.searchIDs(t, term("doomed"), driver.Filter{}, 10); !slices.Equal(ids, []int64{c.ID}) {
		t.Errorf("search \"doomed\" after a failed Delete returned %v, want [%d]", ids, c.ID)
	}
	if ids := f.searchIDs(t, phrase("stable", "alpha"), driver.Filter{}, 10); !slices.Equal(ids, []int64{a.ID}) {
		t.Errorf("search \"stable alpha\" after a failed Put returned %v, want [%d]", ids, a.ID)
	}
}

func testReopen(t *testing.T, f *fixture) {
	full := fullMemory()
	plain := newMemory("plain memory that gets a second version")
	doomed := newMemory("doomed memory with the highest id")
	f.insert(t, full, plain, doomed)
	f.put(t, nextVersion(plain, "plain memory, second version"))
	f.update(t, func(tx driver.Tx) error {
		if err := tx.Link(driver.Edge{From: full.ID, To: plain.ID, Type: driver.EdgeSupports, Weight: 0.3, CreatedAt: at(7), Source: "test"}); err != nil {
			return err
		}
		if err := tx.Link(driver.Edge{From: plain.ID, To: doomed.ID, Type: driver.EdgeRelatesTo, Weight: 1, CreatedAt: at(8)}); err != nil {
			return err
		}
		if err := tx.SetMeta("embedder.model", "hash-v1-256"); err != nil {
			return err
		}
		return tx.AppendAudit(&driver.AuditEntry{Time: at(9), Action: "remember", MemoryID: full.ID, Detail: `{"a":1}`, Hash: "h1"})
	})
	f.update(t, func(tx driver.Tx) error { return tx.Touch([]int64{plain.ID}, at(10)) })
	f.forget(t, doomed.ID)
	before := takeSnapshot(t, f)

	f.reopen(t)
	compareSnapshots(t, "after reopening", before, takeSnapshot(t, f))

	// Reopening must not forget which ids were handed out.
	next := f.insert(t, newMemory("inserted after reopening"))[0]
	if next <= doomed.ID {
		t.Errorf("Insert after reopening assigned id %d, but %d was used before (and deleted); ids must never be reused", next, doomed.ID)
	}
	if s := f.seq(t); s <= before.seq {
		t.Errorf("Seq after an Insert following reopen = %d, want more than %d", s, before.seq)
	}
	e := &driver.AuditEntry{Time: at(11), Action: "remember", MemoryID: next, PrevHash: "h1", Hash: "h2"}
	f.update(t, func(tx driver.Tx) error { return tx.AppendAudit(e) })
	if len(before.audit) > 0 && e.Seq <= before.audit[len(before.audit)-1].Seq {
		t.Errorf("AppendAudit after reopening assigned Seq %d, not after %d", e.Seq, before.audit[len(before.audit)-1].Seq)
	}
}

func testCanceledContext(t *testing.T, f *fixture) {
	f.insert(t, newMemory("present before cancellation"))
	before := takeSnapshot(t, f)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := f.b.View(ctx, func(tx driver.ReadTx) error { return nil })
	wantErr(t, "View with a cancelled context", err, context.Canceled)
	err = f.b.Update(ctx, func(tx driver.Tx) error {
		if err := tx.Insert(newMemory("written under a cancelled context")); err != nil {
			return err
		}
		return tx.SetMeta("k", "cancelled")
	})
	wantErr(t, "Update with a cancelled context", err, context.Canceled)
	_, err = f.b.SearchKeyword(ctx, term("present"), driver.Filter{}, 10)
	wantErr(t, "SearchKeyword with a cancelled context", err, context.Canceled)
	compareSnapshots(t, "after Update with a cancelled context", before, takeSnapshot(t, f))

	// Cancelled while fn runs: the Update either commits fully and reports
	// success, or reports the cancellation and writes nothing.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	var id int64
	err = f.b.Update(ctx, func(tx driver.Tx) error {
		m := newMemory("cancelled midway through the transaction")
		if err := tx.Insert(m); err != nil {
			return err
		}
		id = m.ID
		cancel()
		return tx.SetMeta("k", "midway")
	})
	switch {
	case err == nil:
		if m := f.get(t, id, 0); m.Content != "cancelled midway through the transaction" {
			t.Errorf("Update reported success, but memory %d holds %q", id, m.Content)
		}
	case errors.Is(err, context.Canceled):
		compareSnapshots(t, "after an Update cancelled midway", before, takeSnapshot(t, f))
	default:
		t.Errorf("Update cancelled midway returned %v, want nil or an error wrapping context.Canceled", err)
	}
}

func testUseAfterClose(t *testing.T, f *fixture) {
	m := newMemory("still here after close and reopen")
	f.insert(t, m)
	b := f.b
	f.close(t)

	called := false
	err := b.View(context.Background(), func(driver.ReadTx) error { called = true; return nil })
	wantErr(t, "View after Close", err, driver.ErrClosed)
	err = b.Update(context.Background(), func(driver.Tx) error { called = true; return nil })
	wantErr(t, "Update after Close", err, driver.ErrClosed)
	if called {
		t.Errorf("View or Update after Close called fn")
	}
	_, err = b.SearchKeyword(context.Background(), term("still"), driver.Filter{}, 10)
	wantErr(t, "SearchKeyword after Close", err, driver.ErrClosed)
	wantErr(t, "Close after Close", b.Close(), driver.ErrClosed)

	f.open(t)
	if d := diffMemory(m, f.get(t, m.ID, 0)); len(d) > 0 {
		t.Errorf("memory after close and reopen:\n  %s", strings.Join(d, "\n  "))
	}
}

// Concurrency case sizes: writers each write items memories while readers
// check snapshot consistency, each up to maxReads times. (Readers that never
// pause keep some backends from checkpointing after a delete, which only
// makes the case slow.)
const writers, items, readers, maxReads = 4, 10, 2, 10

func testConcurrency(t *testing.T, f *fixture) {
	ctx := context.Background()
	ids := make([][]int64, writers)
	var wg sync.WaitGroup
	done := make(chan struct{})
	for w := range writers {
		ids[w] = make([]int64, items)
		wg.Go(func() {
			for i := range items {
				if !writeItem(ctx, t, f, w, i, ids[w]) {
					return
				}
			}
		})
	}
	var rwg sync.WaitGroup
	for range readers {
		rwg.Go(func() {
			for n := range maxReads {
				if n > 0 {
					select {
					case <-done:
						return
					default:
					}
				}
				if err := readConsistently(ctx, f.b); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(done)
	rwg.Wait()
	if t.Failed() {
		return
	}

	// The final state is what the writers did.
	seen := map[int64]bool{}
	var wantLive []int64
	for w := range writers {
		for i, id := range ids[w] {
			if seen[id] {
				t.Errorf("id %d assigned twice", id)
			}
			seen[id] = true
			if deletedItem(i) {
				continue
			}
			wantLive = append(wantLive, id)
			m := f.get(t, id, 0)
			wantVersion := 1
			if i%3 == 1 {
				wantVersion = 2
			}
			if m.Version != wantVersion || m.AccessCount != 1 {
				t.Errorf("writer %d item %d: version %d, access count %d; want version %d, access count 1", w, i, m.Version, m.AccessCount, wantVersion)
			}
			var want []driver.Edge
			if i > 0 && !deletedItem(i-1) {
				want = append(want, driver.Edge{From: ids[w][i-1], To: id, Type: driver.EdgeRelatesTo, Weight: 1, CreatedAt: at(i)})
			}
			if i+1 < items && !deletedItem(i+1) {
				want = append(want, driver.Edge{From: id, To: ids[w][i+1], Type: driver.EdgeRelatesTo, Weight: 1, CreatedAt: at(i + 1)})
			}
			checkEdges(t, fmt.Sprintf("Edges of writer %d item %d", w, i), f.edges(t, id), want)
		}
	}
	if got := f.scanIDs(t, driver.ScanOptions{}); !sameSet(got, wantLive) {
		t.Errorf("after concurrent writes Scan returns %v, want %v", got, sorted(wantLive))
	}
}

// deletedItem reports whether a concurrency writer deletes item i: every
// fourth, two steps after writing it (so that the last ones survive).
func deletedItem(i int) bool { return i%4 == 1 && i+2 < items }

// writeItem is step i of concurrency writer w: insert item i linked from item
// i-1, give every third item a second version, touch it, and delete item i-2
// when its turn has come. It reports failures with t.Errorf (it runs outside
// the test goroutine) and returns false after one.
func writeItem(ctx context.Context, t *testing.T, f *fixture, w, i int, ids []int64) bool {
	m := newMemory(fmt.Sprintf("writer %d wrote item %d about concurrency", w, i), withEmbedding("m", float32(w), float32(i)))
	err := f.b.Update(ctx, func(tx driver.Tx) error {
		if err := tx.Insert(m); err != nil {
			return err
		}
		if i == 0 {
			return nil
		}
		return tx.Link(driver.Edge{From: ids[i-1], To: m.ID, Type: driver.EdgeRelatesTo, Weight: 1, CreatedAt: at(i)})
	})
	if err != nil {
		t.Errorf("writer %d: insert item %d: %v", w, i, err)
		return false
	}
	ids[i] = m.ID
	if i%3 == 1 {
		err := f.b.Update(ctx, func(tx driver.Tx) error {
			cur, err := tx.Get(m.ID, 0)
			if err != nil {
				return err
			}
			return tx.Put(nextVersion(cur, fmt.Sprintf("writer %d revised item %d about concurrency", w, i)))
		})
		if err != nil {
			t.Errorf("writer %d: put item %d: %v", w, i, err)
			return false
		}
	}
	if err := f.b.Update(ctx, func(tx driver.Tx) error { return tx.Touch([]int64{m.ID}, at(i)) }); err != nil {
		t.Errorf("writer %d: touch item %d: %v", w, i, err)
		return false
	}
	if i >= 2 && deletedItem(i-2) {
		var content string
		err := f.b.Update(ctx, func(tx driver.Tx) error {
			old, err := tx.Get(ids[i-2], 0)
			if err != nil {
				return err
			}
			content = old.Content
			return tx.Delete(ids[i-2])
		})
		if err != nil {
			t.Errorf("writer %d: delete item %d: %v", w, i-2, err)
			return false
		}
		f.noteForgotten(ids[i-2], content)
	}
	return true
}

// readConsistently checks, in one read transaction, that the snapshot does
// not move and that Scan and the change log agree, then runs a search.
func readConsistently(ctx context.Context, b driver.Backend) error {
	err := b.View(ctx, func(tx driver.ReadTx) error {
		s1, err := tx.Seq()
		if err != nil {
			return err
		}
		var scanned []int64
		if err := tx.Scan(driver.ScanOptions{}, func(m *driver.Memory) error {
			scanned = append(scanned, m.ID)
			return nil
		}); err != nil {
			return err
		}
		var logged []int64
		if err := tx.Changes(0, func(c driver.Change) error {
			if !c.Deleted {
				logged = append(logged, c.ID)
			}
			return nil
		}); err != nil {
			return err
		}
		s2, err := tx.Seq()
		if err != nil {
			return err
		}
		if s1 != s2 {
			return fmt.Errorf("Seq moved from %d to %d inside one View; a read transaction must see one snapshot", s1, s2)
		}
		if !sameSet(scanned, logged) {
			return fmt.Errorf("inside one View, Scan returns %v but Changes(0) lists %v", scanned, logged)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("concurrent reader: %w", err)
	}
	hits, err := b.SearchKeyword(ctx, term("concurrency"), driver.Filter{}, 50)
	if err != nil {
		return fmt.Errorf("concurrent search: %w", err)
	}
	return checkHitOrder(hits, 50)
}

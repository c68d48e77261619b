package backendtest

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/memos-go/memos/core/driver"
)

// edgeKey identifies an edge.
type edgeKey struct {
	From, To int64
	Type     driver.EdgeType
}

func keyOf(e driver.Edge) edgeKey { return edgeKey{e.From, e.To, e.Type} }

func compareEdgeKeys(a, b edgeKey) int {
	return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To), cmp.Compare(a.Type, b.Type))
}

// checkInvariants checks what must hold in every store after every case:
//   - Scan (no filter) yields strictly ascending ids, each equal to Get(id, 0);
//   - History of each memory holds versions 1..current, the last equal to the
//     current version;
//   - Changes(0) reports every live memory once, with its current namespace,
//     pool, status and embedding, in ascending Seq order, none after Seq();
//   - every live memory is found by a keyword search for its own content, and
//     no search returns anything else than live memories;
//   - forgotten memories are gone from records, history, the change log (but
//     for tombstones), the graph and the keyword index;
//   - every edge's endpoints exist, and both endpoints list it.
func (f *fixture) checkInvariants(t *testing.T) {
	t.Helper()
	if f.b == nil {
		f.open(t)
	}
	live := map[int64]*driver.Memory{}
	var order []int64
	edgesOf := map[int64][]driver.Edge{}
	f.view(t, func(tx driver.ReadTx) error {
		err := tx.Scan(driver.ScanOptions{}, func(m *driver.Memory) error {
			if len(order) > 0 && m.ID <= order[len(order)-1] {
				t.Errorf("invariant: Scan yielded id %d after %d, want ascending ids", m.ID, order[len(order)-1])
			}
			order = append(order, m.ID)
			live[m.ID] = m
			return nil
		})
		if err != nil {
			return fmt.Errorf("Scan: %w", err)
		}
		seq, err := tx.Seq()
		if err != nil {
			return fmt.Errorf("Seq: %w", err)
		}
		f.checkChangeLog(t, tx, seq, live)
		for _, id := range order {
			f.checkRecord(t, tx, live[id])
			es, err := tx.Edges(id)
			if err != nil {
				t.Errorf("invariant: Edges(%d) of a live memory: %v", id, err)
				continue
			}
			edgesOf[id] = es
		}
		f.mu.Lock()
		forgotten := maps.Clone(f.forgotten)
		f.mu.Unlock()
		for id := range forgotten {
			checkForgotten(t, tx, id, live)
		}
		return nil
	})
	checkGraph(t, edgesOf, live)
	f.checkKeywordIndex(t, order, live)
}

// checkRecord checks Get and History of a live memory against what Scan
// returned.
func (f *fixture) checkRecord(t *testing.T, tx driver.ReadTx, m *driver.Memory) {
	t.Helper()
	got, err := tx.Get(m.ID, 0)
	if err != nil {
		t.Errorf("invariant: Get(%d, 0) of a scanned memory: %v", m.ID, err)
		return
	}
	if d := diffMemory(m, got); len(d) > 0 {
		t.Errorf("invariant: Scan and Get(%d, 0) disagree:\n  %s", m.ID, strings.Join(d, "\n  "))
	}
	hist, err := tx.History(m.ID)
	if err != nil {
		t.Errorf("invariant: History(%d) of a live memory: %v", m.ID, err)
		return
	}
	if len(hist) != m.Version {
		t.Errorf("invariant: History(%d) has %d versions, but the current version is %d", m.ID, len(hist), m.Version)
		return
	}
	for i, h := range hist {
		if h.ID != m.ID || h.Version != i+1 {
			t.Errorf("invariant: History(%d)[%d] is memory %d version %d, want version %d", m.ID, i, h.ID, h.Version, i+1)
		}
	}
	if d := diffMemoryFields(m, hist[len(hist)-1], false); len(d) > 0 {
		t.Errorf("invariant: the last version in History(%d) differs from the current one:\n  %s", m.ID, strings.Join(d, "\n  "))
	}
}

// checkChangeLog checks Changes(0) against the live memories.
func (f *fixture) checkChangeLog(t *testing.T, tx driver.ReadTx, seq uint64, live map[int64]*driver.Memory) {
	t.Helper()
	seen := map[int64]bool{}
	var prev uint64
	err := tx.Changes(0, func(c driver.Change) error {
		if seen[c.ID] {
			t.Errorf("invariant: Changes(0) reports memory %d twice", c.ID)
		}
		seen[c.ID] = true
		if c.Seq < prev || c.Seq == 0 || c.Seq > seq {
			t.Errorf("invariant: Changes(0) entry for %d has Seq %d (previous %d, Seq() %d); want ascending, in 1..Seq()", c.ID, c.Seq, prev, seq)
		}
		prev = c.Seq
		m, ok := live[c.ID]
		switch {
		case c.Deleted && ok:
			t.Errorf("invariant: Changes(0) reports live memory %d as deleted", c.ID)
		case c.Deleted:
		case !ok:
			t.Errorf("invariant: Changes(0) reports memory %d, which Scan does not return", c.ID)
		default:
			if d := diffChange(m, c); d != "" {
				t.Errorf("invariant: Changes(0): %s", d)
			}
		}
		return nil
	})
	if err != nil {
		t.Errorf("invariant: Changes(0): %v", err)
	}
	for id := range live {
		if !seen[id] {
			t.Errorf("invariant: Scan returns memory %d, but Changes(0) does not", id)
		}
	}
}

// checkForgotten checks that a deleted memory left nothing reachable behind.
func checkForgotten(t *testing.T, tx driver.ReadTx, id int64, live map[int64]*driver.Memory) {
	t.Helper()
	if _, ok := live[id]; ok {
		t.Errorf("invariant: deleted memory %d is returned by Scan", id)
	}
	if _, err := tx.Get(id, 0); !errors.Is(err, driver.ErrNotFound) {
		t.Errorf("invariant: Get(%d, 0) of a deleted memory: %v, want ErrNotFound", id, err)
	}
	if _, err := tx.Get(id, 1); !errors.Is(err, driver.ErrNotFound) {
		t.Errorf("invariant: Get(%d, 1) of a deleted memory: %v, want ErrNotFound", id, err)
	}
	if _, err := tx.History(id); !errors.Is(err, driver.ErrNotFound) {
		t.Errorf("invariant: History(%d) of a deleted memory: %v, want ErrNotFound", id, err)
	}
	// Whether Edges of an unknown id is an error is not specified; it must
	// not list anything.
	if es, err := tx.Edges(id); err == nil && len(es) > 0 {
		t.Errorf("invariant: deleted memory %d still has edges %v", id, es)
	} else if err != nil && !errors.Is(err, driver.ErrNotFound) {
		t.Errorf("invariant: Edges(%d) of a deleted memory: %v", id, err)
	}
}

// checkGraph checks that edges are sorted, touch the memory they are listed
// for, join live memories and are listed by both endpoints.
func checkGraph(t *testing.T, edgesOf map[int64][]driver.Edge, live map[int64]*driver.Memory) {
	t.Helper()
	for id, es := range edgesOf {
		for i, e := range es {
			if e.From != id && e.To != id {
				t.Errorf("invariant: Edges(%d) lists %d→%d (%s), which does not touch %d", id, e.From, e.To, e.Type, id)
			}
			for _, end := range []int64{e.From, e.To} {
				if _, ok := live[end]; !ok {
					t.Errorf("invariant: edge %d→%d (%s) dangles: memory %d does not exist", e.From, e.To, e.Type, end)
				}
			}
			if i > 0 && compareEdgeKeys(keyOf(es[i-1]), keyOf(e)) >= 0 {
				t.Errorf("invariant: Edges(%d) is not strictly ordered by (From, To, Type): %v", id, es)
			}
			other := e.From
			if other == id {
				other = e.To
			}
			if oes, ok := edgesOf[other]; ok {
				j := slices.IndexFunc(oes, func(o driver.Edge) bool { return keyOf(o) == keyOf(e) })
				if j < 0 {
					t.Errorf("invariant: Edges(%d) lists %d→%d (%s), but Edges(%d) does not", id, e.From, e.To, e.Type, other)
				} else if d := diffEdge(e, oes[j]); len(d) > 0 {
					t.Errorf("invariant: Edges(%d) and Edges(%d) disagree on %d→%d (%s): %s", id, other, e.From, e.To, e.Type, strings.Join(d, "; "))
				}
			}
		}
	}
}

// checkKeywordIndex checks that each live memory is found by its own content
// and that no forgotten memory is found by the content it had.
func (f *fixture) checkKeywordIndex(t *testing.T, order []int64, live map[int64]*driver.Memory) {
	t.Helper()
	limit := len(live) + 1
	checkHits := func(q string, ids []int64) {
		for _, id := range ids {
			if _, ok := live[id]; !ok {
				t.Errorf("invariant: keyword search %s returned %d, which is not a live memory", q, id)
			}
		}
	}
	for _, id := range order {
		q := contentQuery(live[id].Content)
		if q == nil {
			continue
		}
		ids := f.searchIDs(t, q, driver.Filter{}, limit)
		checkHits(describe(q), ids)
		if !slices.Contains(ids, id) {
			t.Errorf("invariant: keyword search %s for memory %d's own content returned %v without it", describe(q), id, ids)
		}
	}
	f.mu.Lock()
	forgotten := maps.Clone(f.forgotten)
	f.mu.Unlock()
	for id, contents := range forgotten {
		for _, c := range contents {
			q := contentQuery(c)
			if q == nil {
				continue
			}
			ids := f.searchIDs(t, q, driver.Filter{}, limit)
			checkHits(describe(q), ids)
			if slices.Contains(ids, id) {
				t.Errorf("invariant: keyword search %s returned deleted memory %d", describe(q), id)
			}
		}
	}
}

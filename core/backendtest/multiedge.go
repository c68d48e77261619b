package backendtest

import (
	"fmt"
	"testing"

	"github.com/memos-go/memos/core/driver"
)

// testEdgesMany checks driver.MultiEdgeReader, when the backend offers it,
// against Edges: the same edges in the same order for every id, an edge
// between two of the ids in both lists, ids without edges (unknown and
// forgotten ones) absent, duplicates allowed, and the transaction's own
// writes seen.
func testEdgesMany(t *testing.T, f *fixture) {
	var has bool
	f.view(t, func(tx driver.ReadTx) error {
		_, has = tx.(driver.MultiEdgeReader)
		return nil
	})
	if !has {
		t.Logf("%s does not implement driver.MultiEdgeReader; nothing to check", f.h.Name)
		return
	}
	a, b, c, d, lone := newMemory("node a"), newMemory("node b"), newMemory("node c"), newMemory("node d"), newMemory("no edges")
	f.insert(t, a, b, c, d, lone)
	edge := func(from, to *driver.Memory, ty driver.EdgeType, w float64, n int) driver.Edge {
		return driver.Edge{From: from.ID, To: to.ID, Type: ty, Weight: w, CreatedAt: at(n), Source: "test"}
	}
	f.update(t, func(tx driver.Tx) error {
		for _, e := range []driver.Edge{
			edge(c, a, driver.EdgeRelatesTo, 0.5, 1), edge(a, b, driver.EdgeSupports, 1, 2), edge(a, b, driver.EdgeRelatesTo, 0.25, 3),
			edge(b, c, driver.EdgeTemporalPrecedes, 2, 4), edge(a, d, driver.EdgeDerivedFrom, 0, 5), edge(d, c, "cites", 0.75, 6),
		} {
			if err := tx.Link(e); err != nil {
				return err
			}
		}
		return nil
	})
	f.forget(t, d.ID)
	ids := []int64{b.ID, missingID, a.ID, lone.ID, d.ID, c.ID, a.ID}
	check := func(what string, tx driver.ReadTx, ids []int64) {
		t.Helper()
		got, err := tx.(driver.MultiEdgeReader).EdgesMany(ids)
		if err != nil {
			t.Fatalf("%s: EdgesMany: %v", what, err)
		}
		want := map[int64]bool{}
		for _, id := range ids {
			es, err := tx.Edges(id)
			if err != nil {
				t.Fatalf("%s: Edges(%d): %v", what, id, err)
			}
			if len(es) == 0 {
				if g, ok := got[id]; ok {
					t.Errorf("%s: memory %d has no edges, EdgesMany lists %v", what, id, g)
				}
				continue
			}
			want[id] = true
			checkEdges(t, fmt.Sprintf("%s: EdgesMany[%d]", what, id), got[id], es)
		}
		for id := range got {
			if !want[id] {
				t.Errorf("%s: EdgesMany lists memory %d, which is not asked for or has no edges", what, id)
			}
		}
	}
	f.view(t, func(tx driver.ReadTx) error {
		check("EdgesMany", tx, ids)
		if got, err := tx.(driver.MultiEdgeReader).EdgesMany(nil); err != nil || len(got) != 0 {
			t.Errorf("EdgesMany(nil) = %v, %v; want none", got, err)
		}
		return nil
	})
	// A transaction sees its own writes.
	f.update(t, func(tx driver.Tx) error {
		if err := tx.Link(edge(lone, a, driver.EdgeContradicts, 1, 7)); err != nil {
			return err
		}
		if err := tx.Unlink(a.ID, b.ID, driver.EdgeSupports); err != nil {
			return err
		}
		check("EdgesMany inside the linking transaction", tx, ids)
		got, err := tx.(driver.MultiEdgeReader).EdgesMany([]int64{lone.ID})
		if err != nil {
			return err
		}
		if len(got[lone.ID]) != 1 {
			t.Errorf("EdgesMany inside the linking transaction: %v, want the new edge of memory %d", got, lone.ID)
		}
		return nil
	})
}

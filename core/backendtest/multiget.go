package backendtest

import (
	"strings"
	"testing"

	"github.com/memos-go/memos/core/driver"
)

// testGetMany checks driver.MultiGetter, when the backend offers it, against
// Get: the same current versions (access statistics included), unknown and
// forgotten ids left out, duplicates allowed, and the transaction's own
// writes seen.
func testGetMany(t *testing.T, f *fixture) {
	var has bool
	f.view(t, func(tx driver.ReadTx) error {
		_, has = tx.(driver.MultiGetter)
		return nil
	})
	if !has {
		t.Logf("%s does not implement driver.MultiGetter; nothing to check", f.h.Name)
		return
	}
	ids := f.insert(t, fullMemory(), newMemory("second"), newMemory("third, to be forgotten"))
	v2 := f.get(t, ids[1], 0).Clone()
	v2.Version, v2.Content = 2, "second, revised"
	f.update(t, func(tx driver.Tx) error {
		if err := tx.Put(v2); err != nil {
			return err
		}
		if err := tx.Touch([]int64{ids[0], ids[0]}, at(100)); err != nil {
			return err
		}
		return tx.Delete(ids[2])
	})
	want := map[int64]*driver.Memory{ids[0]: f.get(t, ids[0], 0), ids[1]: f.get(t, ids[1], 0)}
	check := func(what string, got map[int64]*driver.Memory, want map[int64]*driver.Memory) {
		t.Helper()
		if len(got) != len(want) {
			t.Errorf("%s: %d memories, want %d", what, len(got), len(want))
		}
		for id, w := range want {
			g, ok := got[id]
			if !ok || g == nil {
				t.Errorf("%s: memory %d missing", what, id)
				continue
			}
			if d := diffMemory(w, g); len(d) > 0 {
				t.Errorf("%s: memory %d differs from Get:\n  %s", what, id, strings.Join(d, "\n  "))
			}
		}
	}
	f.view(t, func(tx driver.ReadTx) error {
		got, err := tx.(driver.MultiGetter).GetMany([]int64{ids[1], missingID, ids[0], ids[2], ids[1]})
		if err != nil {
			t.Fatalf("GetMany: %v", err)
		}
		check("GetMany", got, want)
		got, err = tx.(driver.MultiGetter).GetMany(nil)
		if err != nil || len(got) != 0 {
			t.Errorf("GetMany(nil) = %d memories, %v; want none", len(got), err)
		}
		return nil
	})
	// Returned values are fresh.
	f.view(t, func(tx driver.ReadTx) error {
		got, err := tx.(driver.MultiGetter).GetMany([]int64{ids[0]})
		if err != nil {
			t.Fatalf("GetMany: %v", err)
		}
		got[ids[0]].Entities[0] = "changed"
		return nil
	})
	check("GetMany after the caller changed a result", func() map[int64]*driver.Memory {
		var got map[int64]*driver.Memory
		f.view(t, func(tx driver.ReadTx) error {
			var err error
			got, err = tx.(driver.MultiGetter).GetMany([]int64{ids[0], ids[1]})
			return err
		})
		return got
	}(), want)
	// A transaction sees its own writes.
	f.update(t, func(tx driver.Tx) error {
		m := newMemory("written in this transaction")
		if err := tx.Insert(m); err != nil {
			return err
		}
		got, err := tx.(driver.MultiGetter).GetMany([]int64{m.ID, ids[2]})
		if err != nil {
			return err
		}
		if len(got) != 1 || got[m.ID] == nil || got[m.ID].Content != m.Content {
			t.Errorf("GetMany inside the inserting transaction = %v, want only memory %d", got, m.ID)
		}
		return nil
	})
}

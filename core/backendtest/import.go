package backendtest

import (
	"context"
	"errors"
	"testing"

	"github.com/memos-go/memos/core/driver"
)

// testImport checks the optional driver.Importer capability: memories keep the
// ids they are given, later versions follow with Put, and reserved ids are
// never assigned.
func testImport(t *testing.T, f *fixture) {
	var has bool
	f.update(t, func(tx driver.Tx) error {
		_, has = tx.(driver.Importer)
		return nil
	})
	if !has {
		t.Logf("%s does not implement driver.Importer; nothing to check", f.h.Name)
		return
	}
	m := newMemory("imported memory keeps its id")
	m.ID = 40
	f.update(t, func(tx driver.Tx) error { return tx.(driver.Importer).InsertAt(m) })
	got := f.get(t, 40, 0)
	if got.Content != m.Content || got.Version != 1 {
		t.Fatalf("Get(40) after InsertAt = v%d %q", got.Version, got.Content)
	}
	v2 := got.Clone()
	v2.Version, v2.Content = 2, "imported memory, second version"
	f.update(t, func(tx driver.Tx) error { return tx.Put(v2) })
	if got := f.get(t, 40, 0); got.Version != 2 || got.Content != v2.Content {
		t.Fatalf("Put after InsertAt: current is v%d %q", got.Version, got.Content)
	}
	err := f.b.Update(context.Background(), func(tx driver.Tx) error {
		again := newMemory("same id again")
		again.ID = 40
		return tx.(driver.Importer).InsertAt(again)
	})
	if !errors.Is(err, driver.ErrConflict) {
		t.Errorf("InsertAt of an existing id: %v, want ErrConflict", err)
	}
	err = f.b.Update(context.Background(), func(tx driver.Tx) error { return tx.(driver.Importer).InsertAt(newMemory("no id")) })
	if !errors.Is(err, driver.ErrInvalid) {
		t.Errorf("InsertAt without an id: %v, want ErrInvalid", err)
	}
	f.update(t, func(tx driver.Tx) error { return tx.(driver.Importer).ReserveIDs(99) })
	ids := f.insert(t, newMemory("inserted after reserving ids"))
	if ids[0] <= 99 {
		t.Errorf("Insert after ReserveIDs(99) assigned id %d", ids[0])
	}
	// Reserving below the counter changes nothing.
	f.update(t, func(tx driver.Tx) error { return tx.(driver.Importer).ReserveIDs(5) })
	if next := f.insert(t, newMemory("and another")); next[0] <= ids[0] {
		t.Errorf("Insert after ReserveIDs(5) assigned id %d, not above %d", next[0], ids[0])
	}
}

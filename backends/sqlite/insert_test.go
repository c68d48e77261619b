package sqlite

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/memos-go/memos/core/driver"
)

// TestBatchIsOneKeywordSegment: the memories one transaction inserts reach
// FTS5's index as one segment. Written a statement each, every memory was
// a segment of its own (FTS5 writes its pending rows at the start of every
// statement), which the index's merges then rewrote again and again.
func TestBatchIsOneKeywordSegment(t *testing.T) {
	d, _ := tempDB(t)
	ms := make([]*driver.Memory, 200)
	for i := range ms {
		ms[i] = newMem(fmt.Sprintf("turn %d of the conversation about topic%d", i, i%7))
	}
	insert(t, d, ms...)
	var segs int
	if err := d.w.QueryRow(`SELECT count(DISTINCT segid) FROM memories_fts_idx`).Scan(&segs); err != nil {
		t.Fatal(err)
	}
	if segs != 1 {
		t.Errorf("the keyword index has %d segments after one transaction; want 1", segs)
	}
	for i, m := range ms {
		if m.ID != int64(i+1) {
			t.Fatalf("memory %d has id %d; want %d", i, m.ID, i+1)
		}
	}
	checkConsistent(t, d, len(ms))
}

// TestInsertIDs: inserts take the ids AUTOINCREMENT gives, also when they
// are written after the call (writeTx.rows): never an id used before, not
// even one deleted, after ids set by InsertAt and ReserveIDs, and the
// transaction reads what it inserted.
func TestInsertIDs(t *testing.T) {
	d, _ := tempDB(t)
	ctx := context.Background()
	a, b, c := newMem("alpha"), newMem("beta"), newMem("gamma")
	insert(t, d, a, b, c)
	if a.ID != 1 || b.ID != 2 || c.ID != 3 {
		t.Fatalf("ids %d, %d, %d; want 1, 2, 3", a.ID, b.ID, c.ID)
	}
	update(t, d, func(tx driver.Tx) error { return tx.Delete(c.ID) })
	next := func(tx driver.Tx, want int64) error {
		m := newMem(fmt.Sprintf("memory %d", want))
		if err := tx.Insert(m); err != nil {
			return err
		}
		if m.ID != want {
			return fmt.Errorf("insert took id %d; want %d", m.ID, want)
		}
		got, err := tx.Get(m.ID, 0)
		if err != nil {
			return fmt.Errorf("get %d in its transaction: %w", m.ID, err)
		}
		if got.Content != m.Content {
			return fmt.Errorf("memory %d reads %q; want %q", m.ID, got.Content, m.Content)
		}
		return nil
	}
	update(t, d, func(tx driver.Tx) error {
		if err := next(tx, 4); err != nil { // 3 was deleted: never reused
			return err
		}
		at := newMem("imported")
		at.ID = 10
		if err := tx.(driver.Importer).InsertAt(at); err != nil {
			return err
		}
		if err := next(tx, 11); err != nil {
			return err
		}
		if err := tx.(driver.Importer).ReserveIDs(20); err != nil {
			return err
		}
		return next(tx, 21)
	})
	// A transaction that fails leaves nothing: its ids are given again.
	failed := errors.New("give up")
	err := d.Update(ctx, func(tx driver.Tx) error {
		if err := next(tx, 22); err != nil {
			return err
		}
		return failed
	})
	if !errors.Is(err, failed) {
		t.Fatalf("Update: %v; want %v", err, failed)
	}
	update(t, d, func(tx driver.Tx) error {
		if err := next(tx, 22); err != nil {
			return err
		}
		return next(tx, 23)
	})
	checkConsistent(t, d, 8)
}

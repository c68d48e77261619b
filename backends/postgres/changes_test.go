package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/memos-go/memos/core/driver"
)

// Changes reads the log in pages that grow from 256 rows: across every
// page boundary, and from any point of the log, it lists each change
// once, in (Seq, ID) order, forgotten memories as tombstones among them,
// and a caller may stop it early.
func TestChangesAcrossPages(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, "changes")
	defer db.Close()
	const n = 2600 // pages of 256, 512, 1024 and part of 2048
	var ids []int64
	for start := 0; start < n; start += 700 {
		if err := db.Update(ctx, func(tx driver.Tx) error {
			for i := start; i < min(start+700, n); i++ {
				m := &driver.Memory{Version: 1, Namespace: driver.DefaultNamespace, Pool: driver.PoolMemory, Type: driver.TypeFact,
					Content: fmt.Sprintf("memory %d", i), Significance: 5, Trust: driver.Trust{Level: driver.TrustCertain, Score: 1},
					Status: driver.StatusActive, Embedding: driver.Embedding{Model: "m", Vector: []float32{float32(i), 1}},
					CreatedAt: time.Now(), UpdatedAt: time.Now()}
				if err := tx.Insert(m); err != nil {
					return err
				}
				ids = append(ids, m.ID)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	// Later writes move memories of the first pages to the end of the log.
	if err := db.Update(ctx, func(tx driver.Tx) error {
		for i := 0; i < n; i += 97 {
			if err := tx.Delete(ids[i]); err != nil {
				return err
			}
		}
		for i := 5; i < n; i += 131 {
			m, err := tx.Get(ids[i], 0)
			if err != nil {
				return err
			}
			m.Version++
			m.Status = driver.StatusArchived
			if err := tx.Put(m); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var all []driver.Change
	read := func(since uint64, stop int) []driver.Change {
		var out []driver.Change
		errStop := errors.New("stop")
		err := db.View(ctx, func(tx driver.ReadTx) error {
			return tx.Changes(since, func(c driver.Change) error {
				out = append(out, c)
				if len(out) == stop {
					return errStop
				}
				return nil
			})
		})
		if err != nil && !errors.Is(err, errStop) {
			t.Fatal(err)
		}
		return out
	}
	all = read(0, -1)
	seen := map[int64]bool{}
	deleted, archived := 0, 0
	for i, c := range all {
		if seen[c.ID] {
			t.Fatalf("memory %d is listed twice", c.ID)
		}
		seen[c.ID] = true
		if i > 0 && (c.Seq < all[i-1].Seq || c.Seq == all[i-1].Seq && c.ID <= all[i-1].ID) {
			t.Fatalf("change %d (seq %d, id %d) follows seq %d, id %d", i, c.Seq, c.ID, all[i-1].Seq, all[i-1].ID)
		}
		switch {
		case c.Deleted:
			deleted++
		case c.Status == driver.StatusArchived:
			archived++
		case len(c.Embedding.Vector) != 2 || c.Embedding.Vector[1] != 1:
			t.Fatalf("memory %d comes with vector %v", c.ID, c.Embedding.Vector)
		}
	}
	if len(all) != n || deleted != (n+96)/97 || archived == 0 {
		t.Fatalf("Changes(0): %d changes, %d deleted, %d archived; want %d, %d, some", len(all), deleted, archived, n, (n+96)/97)
	}
	for _, from := range []int{1, 255, 256, 700, 1500, n - 40, n - 1} {
		got := read(all[from-1].Seq, -1)
		var want []driver.Change
		for _, c := range all {
			if c.Seq > all[from-1].Seq {
				want = append(want, c)
			}
		}
		if len(got) != len(want) || len(got) > 0 && (got[0].ID != want[0].ID || got[len(got)-1].ID != want[len(want)-1].ID) {
			t.Errorf("Changes(%d): %d changes, want %d", all[from-1].Seq, len(got), len(want))
		}
	}
	if got := read(0, 300); len(got) != 300 || got[299].ID != all[299].ID {
		t.Errorf("Changes stopped after 300: %d changes", len(got))
	}
}

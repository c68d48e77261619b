package bolt

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/query"
)

// TestCommittedWriteReportedWhenIndexFails injects the failure a full disk
// causes after a commit: the keyword index cannot take the write (here it is
// closed underneath the store). The records committed, so Update must report
// success (a caller that saw an error would retry and store the memory
// twice), and the next Open must bring the index up to date.
func TestCommittedWriteReportedWhenIndexFails(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "store")
	d := reopen(t, dir)
	m := testMemory("stored while the index could not follow " + secretWord)
	if err := d.idx.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Update(ctx, func(tx driver.Tx) error { return tx.Insert(m) }); err != nil {
		t.Fatalf("Update whose records committed = %v; want nil (the write is stored)", err)
	}
	if !d.stale.Load() {
		t.Error("the index was not marked for repair")
	}
	if err := d.bdb.Close(); err != nil { // the index is closed already
		t.Fatal(err)
	}

	d = reopen(t, dir)
	defer d.Close()
	if _, err := getMemory(d, m.ID); err != nil {
		t.Fatalf("after reopen, memory %d: %v", m.ID, err)
	}
	hits, err := d.SearchKeyword(ctx, &query.Term{Text: secretWord}, driver.Filter{}, 10)
	if err != nil || len(hits) != 1 || hits[0].ID != m.ID {
		t.Fatalf("keyword search after reopen = %v, %v; want memory %d (the index repaired)", hits, err, m.ID)
	}
}

func getMemory(d *DB, id int64) (*driver.Memory, error) {
	var m *driver.Memory
	err := d.View(context.Background(), func(tx driver.ReadTx) error {
		var err error
		m, err = tx.Get(id, 0)
		return err
	})
	return m, err
}

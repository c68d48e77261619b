package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/memos-go/memos/backends/postgres"
	"github.com/memos-go/memos/core/driver"
)

// TestWaitChangeWakesOnAnotherConnectionsWrite: a write through one
// handle wakes WaitChange on another (LISTEN/NOTIFY), well before the poll
// interval, and reports the sequence number the write committed.
func TestWaitChangeWakesOnAnotherConnectionsWrite(t *testing.T) {
	dsn := testDSN(t)
	schema := schemaFor(t, dsn, t.Name())
	ctx := context.Background()
	open := func() *postgres.DB {
		db, err := postgres.Open(ctx, postgres.Config{DSN: dsn, Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	waiter, writer := open(), open()
	sctx, scancel := context.WithTimeout(ctx, 300*time.Millisecond)
	if seq, err := waiter.WaitChange(sctx, 0, time.Hour); err == nil {
		t.Fatalf("WaitChange(0) on a new store returned %d without a change", seq)
	}
	scancel()
	got := make(chan uint64, 1)
	errs := make(chan error, 1)
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	go func() {
		// The poll interval is an hour: only the notification can wake it.
		seq, err := waiter.WaitChange(wctx, 0, time.Hour)
		errs <- err
		got <- seq
	}()
	time.Sleep(200 * time.Millisecond) // let it reach its wait (a write before is found by its first read)
	err := writer.Update(ctx, func(tx driver.Tx) error {
		m := &driver.Memory{Version: 1, Namespace: "default", Pool: driver.PoolMemory, Type: driver.TypeFact,
			Content: "wake up", Significance: 5, Trust: driver.Trust{Level: driver.TrustCertain, Score: 1}, Status: driver.StatusActive,
			CreatedAt: time.Now(), UpdatedAt: time.Now()}
		return tx.Insert(m)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-errs; err != nil {
		t.Fatalf("WaitChange: %v", err)
	}
	if seq := <-got; seq != 1 {
		t.Errorf("WaitChange woke with seq %d, want 1", seq)
	}
}

package backendtest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/memos-go/memos/core/driver"
)

// testTxAfterReturn checks that a transaction kept after View or Update
// returned refuses every call with ErrClosed instead of reading or writing
// outside any transaction.
func testTxAfterReturn(t *testing.T, f *fixture) {
	m := newMemory("present before the transactions ended")
	f.insert(t, m)
	before := takeSnapshot(t, f)

	var kept driver.Tx
	f.update(t, func(tx driver.Tx) error { kept = tx; return nil })
	_, err := kept.Get(m.ID, 0)
	wantErr(t, "Get on a Tx after Update returned", err, driver.ErrClosed)
	err = kept.Insert(newMemory("written after the transaction ended"))
	wantErr(t, "Insert on a Tx after Update returned", err, driver.ErrClosed)
	err = kept.SetMeta("k", "late")
	wantErr(t, "SetMeta on a Tx after Update returned", err, driver.ErrClosed)

	var keptRead driver.ReadTx
	f.view(t, func(tx driver.ReadTx) error { keptRead = tx; return nil })
	_, err = keptRead.Get(m.ID, 0)
	wantErr(t, "Get on a ReadTx after View returned", err, driver.ErrClosed)

	compareSnapshots(t, "after using finished transactions", before, takeSnapshot(t, f))
}

// testUpdatePanic checks that a panic in Update's fn reaches the caller,
// rolls the transaction back, and leaves the backend usable.
func testUpdatePanic(t *testing.T, f *fixture) {
	f.insert(t, newMemory("present before the panic"))
	before := takeSnapshot(t, f)

	recovered := func() (r any) {
		defer func() { r = recover() }()
		f.b.Update(context.Background(), func(tx driver.Tx) error {
			if err := tx.Insert(newMemory("never committed, the transaction panicked")); err != nil {
				return err
			}
			if err := tx.SetMeta("k", "panicked"); err != nil {
				return err
			}
			panic("backendtest: panic in Update")
		})
		return nil
	}()
	if recovered == nil {
		t.Fatal("Update swallowed a panic in fn; it must reach the caller")
	}
	compareSnapshots(t, "after a panic in Update", before, takeSnapshot(t, f))
	// The backend is still usable: the write lock was released.
	f.insert(t, newMemory("written after the panic"))
}

// Concurrent handles case sizes: handles open the same store at once, each
// written by writers goroutines, each inserting each memories.
const handles, handleWriters, each = 3, 3, 10

// testConcurrentHandles checks several handles on one store, as several
// processes would have them. A backend that shares its store (Harness
// Exclusive false) takes concurrent writes through every handle and loses
// none. An exclusive one makes a second Open wait for the first handle's
// Close (or give up with ErrUnavailable), never open the store twice.
func testConcurrentHandles(t *testing.T, f *fixture) {
	if f.h.Exclusive {
		testExclusiveHandle(t, f)
		return
	}
	bs := []driver.Backend{f.b}
	for range handles - 1 {
		b, err := f.h.Open(t, f.path)
		if err != nil {
			t.Fatalf("open a second handle on %s while the first is open: %v (set Harness.Exclusive if the backend opens a store once at a time)", f.path, err)
		}
		defer func() {
			if err := b.Close(); err != nil {
				t.Errorf("Close of an extra handle: %v", err)
			}
		}()
		bs = append(bs, b)
	}
	var wg sync.WaitGroup
	for h, b := range bs {
		for w := range handleWriters {
			wg.Go(func() {
				for i := range each {
					content := fmt.Sprintf("handle %d writer %d item %d", h, w, i)
					err := b.Update(context.Background(), func(tx driver.Tx) error {
						return tx.Insert(newMemory(content))
					})
					if err != nil {
						t.Errorf("Update through handle %d: %v", h, err)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	// Every handle sees every write.
	for h, b := range bs {
		n := 0
		err := b.View(context.Background(), func(tx driver.ReadTx) error {
			return tx.Scan(driver.ScanOptions{}, func(*driver.Memory) error { n++; return nil })
		})
		if err != nil || n != handles*handleWriters*each {
			t.Errorf("handle %d sees %d memories (%v), want %d", h, n, err, handles*handleWriters*each)
		}
	}
}

func testExclusiveHandle(t *testing.T, f *fixture) {
	var firstClosed atomic.Bool
	type opened struct {
		b         driver.Backend
		err       error
		whileOpen bool // Open returned before the first handle's Close
	}
	second := make(chan opened, 1)
	go func() {
		b, err := f.h.Open(t, f.path)
		second <- opened{b, err, !firstClosed.Load()}
	}()
	m := newMemory("written by the first handle while a second one waits")
	f.insert(t, m)
	firstClosed.Store(true)
	f.close(t)

	o := <-second
	switch {
	case o.err != nil && errors.Is(o.err, driver.ErrUnavailable):
		// The second Open gave up waiting; the store must open now.
		f.open(t)
	case o.err != nil:
		t.Fatalf("second Open of an exclusive store: %v; want success after the first handle closes, or an error wrapping ErrUnavailable", o.err)
	case o.whileOpen:
		o.b.Close()
		t.Fatal("a second Open succeeded while the first handle was open, but the harness says the backend is Exclusive")
	default:
		f.b = o.b
	}
	if d := diffMemory(m, f.get(t, m.ID, 0)); len(d) > 0 {
		t.Errorf("the first handle's write, read through the second:\n  %s", strings.Join(d, "\n  "))
	}
}

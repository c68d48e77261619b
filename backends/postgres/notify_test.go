package postgres_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/memos-go/memos/backends/postgres"
	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/embedders/hash"
)

// TestWaitChangeWakesOnAnotherConnectionsWrite: a write through one
// handle wakes WaitChange on another (LISTEN/NOTIFY), well before the poll
// interval, and reports the sequence number the write committed.
func TestWaitChangeWakesOnAnotherConnectionsWrite(t *testing.T) {
	dsn := testDSN(t)
	schema := schemaFor(t, dsn, t.Name())
	ctx := context.Background()
	open := func() *postgres.DB {
		// The poll interval is an hour: only the notification can wake it.
		db, err := postgres.Open(ctx, postgres.Config{DSN: dsn, Schema: schema, PollInterval: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	waiter, writer := open(), open()
	sctx, scancel := context.WithTimeout(ctx, 300*time.Millisecond)
	if seq, err := waiter.WaitChange(sctx, 0); err == nil {
		t.Fatalf("WaitChange(0) on a new store returned %d without a change", seq)
	}
	scancel()
	got := make(chan uint64, 1)
	errs := make(chan error, 1)
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	go func() {
		seq, err := waiter.WaitChange(wctx, 0)
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

// changeSpy is a postgres backend that records the ids its change log
// hands out, so a test can see an engine sync without searching.
type changeSpy struct {
	*postgres.DB
	mu   sync.Mutex
	seen map[int64]bool
}

func (s *changeSpy) View(ctx context.Context, fn func(driver.ReadTx) error) error {
	return s.DB.View(ctx, func(tx driver.ReadTx) error { return fn(spyTx{tx, s}) })
}

func (s *changeSpy) saw(id int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen[id]
}

type spyTx struct {
	driver.ReadTx
	s *changeSpy
}

func (t spyTx) Changes(since uint64, fn func(driver.Change) error) error {
	return t.ReadTx.Changes(since, func(c driver.Change) error {
		t.s.mu.Lock()
		t.s.seen[c.ID] = true
		t.s.mu.Unlock()
		return fn(c)
	})
}

// TestEngineFollowsOtherWriters: an engine over postgres brings its vector
// index up to date when another engine writes, without a search of its
// own, woken by LISTEN/NOTIFY (the poll interval is an hour), and its next

// TestCloseEndsWaitChange: Close does not wait for a WaitChange in progress
// (an engine's follower waits as long as nothing is written): the wait ends
// with ErrClosed and Close returns.
func TestCloseEndsWaitChange(t *testing.T) {
	dsn := testDSN(t)
	schema := schemaFor(t, dsn, t.Name())
	ctx := context.Background()
	db, err := postgres.Open(ctx, postgres.Config{DSN: dsn, Schema: schema, PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	waiting := make(chan error, 1)
	go func() {
		_, err := db.WaitChange(ctx, 0) // no deadline: only Close can end it
		waiting <- err
	}()
	time.Sleep(200 * time.Millisecond) // let it reach its wait
	closed := make(chan error, 1)
	go func() { closed <- db.Close() }()
	deadline := time.After(time.Minute) // a hang, not a speed: Close must not wait for the waiter
	select {
	case err := <-closed:
		if err != nil {
			t.Fatalf("Close: %v", err)
		}
	case <-deadline:
		t.Fatal("Close is still waiting for WaitChange after a minute")
	}
	select {
	case err := <-waiting:
		if !errors.Is(err, driver.ErrClosed) {
			t.Errorf("WaitChange ended with %v, want ErrClosed", err)
		}
	case <-deadline:
		t.Fatal("WaitChange did not return after Close")
	}
}

// search finds the write by vector.
func TestEngineFollowsOtherWriters(t *testing.T) {
	dsn := testDSN(t)
	schema := schemaFor(t, dsn, t.Name())
	ctx := context.Background()
	emb, err := hash.Open(ctx, hash.Config{})
	if err != nil {
		t.Fatal(err)
	}
	open := func(spy bool) (*core.Engine, *changeSpy) {
		db, err := postgres.Open(ctx, postgres.Config{DSN: dsn, Schema: schema, PollInterval: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		var b driver.Backend = db
		var s *changeSpy
		if spy {
			s = &changeSpy{DB: db, seen: map[int64]bool{}}
			b = s
		}
		e, err := core.Open(ctx, core.Options{Backend: b, Embedder: emb})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		return e, s
	}
	writer, _ := open(false)
	follower, spy := open(true)
	for i, content := range []string{"the deploy key rotates every ninety days", "the staging cluster runs in eu-west-1"} {
		m, err := writer.Remember(ctx, core.Input{Content: content})
		if err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(20 * time.Second)
		for !spy.saw(m.ID) {
			if time.Now().After(deadline) {
				t.Fatalf("write %d (memory %d): the other engine's vector index did not sync within 20 s without a search", i, m.ID)
			}
			time.Sleep(10 * time.Millisecond)
		}
		res, err := follower.Search(ctx, core.SearchRequest{Query: content, Mode: core.ModeVector, Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) != 1 || res.Hits[0].Memory.ID != m.ID {
			t.Fatalf("vector search for %q on the other engine = %v, want memory %d", content, res.Hits, m.ID)
		}
	}
}

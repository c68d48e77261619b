package core_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/memos-go/memos/core"
)

// storedAccess reads memory id's access statistics from the store itself,
// below the engine's pending ones.
func storedAccess(t *testing.T, e *core.Engine, id int64) (int64, time.Time) {
	t.Helper()
	var m *core.Memory
	err := e.Backend().View(context.Background(), func(tx core.ReadTx) error {
		var err error
		m, err = tx.Get(id, 0)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m.AccessCount, m.LastAccessedAt
}

// Searches gather their accesses in memory; they reach the store in one
// batch after search.access_flush, or at Close, and Get shows them at once.
func TestAccessStatisticsAreWrittenInBatches(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	clock := newClock()
	e := openAt(t, path, core.Options{Now: clock.now, Search: core.SearchConfig{AccessFlush: time.Hour}})
	m := remember(t, e, core.Input{Content: "the staging database lives on host db-7"})
	for range 3 {
		if _, err := e.Search(ctx, core.SearchRequest{Query: "staging database", Mode: core.ModeKeyword}); err != nil {
			t.Fatal(err)
		}
	}
	if n, _ := storedAccess(t, e, m.ID); n != 0 {
		t.Fatalf("the store holds %d accesses before the batch is due, want 0", n)
	}
	got, err := e.Get(ctx, m.ID)
	if err != nil || got.AccessCount != 3 || got.LastAccessedAt.IsZero() {
		t.Fatalf("get = %+v, %v; want the 3 pending accesses", got, err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = openAt(t, path, core.Options{Now: clock.now})
	defer e.Close()
	if n, last := storedAccess(t, e, m.ID); n != 3 || !last.Equal(got.LastAccessedAt) {
		t.Fatalf("after Close the store holds %d accesses, last %v; want 3, last %v", n, last, got.LastAccessedAt)
	}
}

func TestAccessStatisticsFlushInTheBackground(t *testing.T) {
	ctx := context.Background()
	e := openAt(t, filepath.Join(t.TempDir(), "memory.db"), core.Options{Search: core.SearchConfig{AccessFlush: 20 * time.Millisecond}})
	defer e.Close()
	m := remember(t, e, core.Input{Content: "the VPN certificate expires in March"})
	for range 2 {
		if _, err := e.ContextPack(ctx, core.PackRequest{Query: "VPN certificate"}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, _ := storedAccess(t, e, m.ID)
		if n == 2 {
			break
		}
		if n > 2 || time.Now().After(deadline) {
			t.Fatalf("the store holds %d accesses, want 2 written by the background writer", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	// Written once: Get adds no pending ones any more.
	if got, err := e.Get(ctx, m.ID); err != nil || got.AccessCount != 2 {
		t.Fatalf("get = %+v, %v; want 2 accesses", got, err)
	}
}

func TestAccessFlushSetting(t *testing.T) {
	ctx := context.Background()
	for _, d := range []time.Duration{-time.Second, 2 * time.Hour} {
		b := openBackend(t, "sqlite", t.TempDir())
		_, err := core.Open(ctx, core.Options{Backend: b, Search: core.SearchConfig{AccessFlush: d}})
		if !errors.Is(err, core.ErrInvalid) {
			t.Errorf("access_flush %v: %v, want ErrInvalid", d, err)
		}
		b.Close()
	}
}

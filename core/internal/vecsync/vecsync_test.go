package vecsync

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/memos-go/memos/backends/sqlite"
	"github.com/memos-go/memos/core/driver"
)

// Every vector search syncs the index first. When the store has not
// changed, Sync must not queue behind a sync in progress (x.mu): with
// eight clients of memos serve, searches spent most of their time waiting
// there for one another's read transaction. A change is still applied.
func TestSyncUnchangedDoesNotQueue(t *testing.T) {
	ctx := context.Background()
	b, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "memory.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	model := driver.ModelInfo{ID: "test-model", Dim: 4}
	insert := func(v ...float32) {
		t.Helper()
		err := b.Update(ctx, func(tx driver.Tx) error {
			now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
			return tx.Insert(&driver.Memory{Version: 1, Namespace: driver.DefaultNamespace, Pool: driver.PoolMemory,
				Type: driver.TypeFact, Content: "a note", Significance: 5, CreatedAt: now, UpdatedAt: now,
				Trust:  driver.Trust{Level: driver.TrustCertain, Score: 1},
				Status: driver.StatusActive, Embedding: driver.Embedding{Model: model.ID, Vector: v}})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	insert(1, 0, 0, 0)
	x, err := Open(ctx, b, Config{Model: model})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Stop()
	if x.Len() != 1 {
		t.Fatalf("index holds %d vectors after open, want 1", x.Len())
	}

	x.mu.Lock() // a sync in progress
	done := make(chan error, 1)
	go func() { done <- x.Sync(ctx) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Sync of an unchanged store: %v", err)
		}
	case <-time.After(30 * time.Second):
		x.mu.Unlock()
		<-done
		t.Fatal("Sync of an unchanged store waited for the sync in progress")
	}
	x.mu.Unlock()

	insert(0, 1, 0, 0)
	if err := x.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if x.Len() != 2 {
		t.Fatalf("index holds %d vectors after a write and Sync, want 2", x.Len())
	}
	hits, err := x.Search(ctx, []float32{0, 1, 0, 0}, 1, driver.VectorFilter{})
	if err != nil || len(hits) != 1 || hits[0].ID != 2 {
		t.Fatalf("search for the new vector: %v, %v; want memory 2", hits, err)
	}
}

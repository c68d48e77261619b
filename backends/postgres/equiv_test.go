package postgres_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/memos-go/memos/backends/postgres"
	"github.com/memos-go/memos/backends/sqlite"
	"github.com/memos-go/memos/core/backendtest"
)

// TestEquivalentToSQLite: the keyword equivalence table (the same matches,
// order and bm25 scores as FTS5) passes for postgres too.
func TestEquivalentToSQLite(t *testing.T) {
	p := openTest(t, "equiv")
	t.Cleanup(func() { p.Close() })
	s, err := sqlite.Open(context.Background(), sqlite.Config{Path: filepath.Join(t.TempDir(), "store.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	backendtest.Equivalent(t, sqlite.Name, s, postgres.Name, p)
}

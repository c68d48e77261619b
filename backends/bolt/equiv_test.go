package bolt_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/memos-go/memos/backends/bolt"
	"github.com/memos-go/memos/backends/sqlite"
	"github.com/memos-go/memos/core/backendtest"
)

// TestEquivalentToSQLite loads the same memories into bolt and sqlite and
// checks that every query of the equivalence table returns the same
// memories, in the same order with the same scores, with and without
// filters and limits, also after changes (core/backendtest.Equivalent).
func TestEquivalentToSQLite(t *testing.T) {
	dir := t.TempDir()
	b, err := bolt.Open(context.Background(), bolt.Config{Path: filepath.Join(dir, "store.bolt")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	s, err := sqlite.Open(context.Background(), sqlite.Config{Path: filepath.Join(dir, "store.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	backendtest.Equivalent(t, sqlite.Name, s, bolt.Name, b)
}

package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/memos-go/memos/backends/internal/upgradetest"
	"github.com/memos-go/memos/backends/sqlite"
	"github.com/memos-go/memos/core/driver"
)

// A store written by memos with schema version 1 (two copies of the
// current version) opens, is upgraded in place, and answers every read,
// history, as-of search and revert as it did before.
func TestUpgradeFromV1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.db")
	upgradetest.Gunzip(t, "sqlite-v1.db.gz", path)
	upgradetest.Check(t, "sqlite-v1", func() (driver.Backend, error) {
		return sqlite.Open(context.Background(), sqlite.Config{Path: path})
	})
}

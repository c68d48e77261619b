package bolt_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/memos-go/memos/backends/bolt"
	"github.com/memos-go/memos/backends/internal/upgradetest"
	"github.com/memos-go/memos/core/driver"
)

// A store written by memos with store format 1 opens, is upgraded in
// place, and answers every read, history, as-of search and revert as it
// did before.
func TestUpgradeFromV1(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "memory.bolt")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	upgradetest.Gunzip(t, "bolt-v1.bolt.gz", filepath.Join(dir, bolt.StoreFile))
	upgradetest.Check(t, "bolt-v1", func() (driver.Backend, error) {
		return bolt.Open(context.Background(), bolt.Config{Path: dir})
	})
}

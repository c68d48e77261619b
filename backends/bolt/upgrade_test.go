package bolt

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	bbolt "go.etcd.io/bbolt"

	"github.com/memos-go/memos/backends/internal/upgradetest"
	"github.com/memos-go/memos/core/driver"
)

// A store written by memos with store format 1 opens, is upgraded in
// place, and answers every read, history, as-of search and revert as it
// did before; afterwards its earlier versions are in versionFormat and
// leave out what they share with the next version.
func TestUpgradeFromV1(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "memory.bolt")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	upgradetest.Gunzip(t, "bolt-v1.bolt.gz", filepath.Join(dir, StoreFile))
	upgradetest.Check(t, "bolt-v1", func() (driver.Backend, error) {
		return Open(ctx, Config{Path: dir})
	})
	d, err := Open(ctx, Config{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var n, noContent, noVector int
	err = d.bdb.View(func(tx *bbolt.Tx) error {
		if f := getU64(tx.Bucket(bktSys), keyFormat); f != storeFormat {
			t.Errorf("store format %d after the upgrade, want %d", f, storeFormat)
		}
		return tx.Bucket(bktVer).ForEach(func(k, v []byte) error {
			n++
			if v[0] != versionFormat {
				t.Errorf("earlier version %x is in format %d, want %d", k, v[0], versionFormat)
			}
			h, _ := decodeHead(v)
			if h.Flags&sameContent != 0 {
				noContent++
			}
			if h.Flags&sameVector != 0 {
				noVector++
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	// The fixture's edits that kept the content (metadata, significance,
	// status, validity, entities) store neither content nor vector again.
	if noContent == 0 || noVector == 0 || noContent == n {
		t.Errorf("%d earlier versions, %d without content, %d without vector: want some of each kind", n, noContent, noVector)
	}
}

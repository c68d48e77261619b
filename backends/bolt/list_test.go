package bolt

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/memos-go/memos/core/backendtest"
	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/upgradetest"
)

// TestListIndexesBuiltAtOpen checks that a store written by an older memos
// gets the list buckets when it opens: the store format 1 fixture, and a
// store whose secondary indexes are of layout 2 (as the release before the
// list buckets leaves it, up to date and without them). List then reads
// through them what a Scan says it must.
func TestListIndexesBuiltAtOpen(t *testing.T) {
	ctx := context.Background()
	check := func(dir string) {
		t.Helper()
		d, err := Open(ctx, Config{Path: dir})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		backendtest.CheckList(t, d)
	}
	dir := filepath.Join(t.TempDir(), "memory.bolt")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	upgradetest.Gunzip(t, "bolt-v1.bolt.gz", filepath.Join(dir, StoreFile))
	check(dir)

	d, err := Open(ctx, Config{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	err = d.Update(ctx, func(tx driver.Tx) error {
		for i := range 100 {
			m := testMemory(fmt.Sprintf("memory %d", i))
			m.Significance = 1 + i%3
			m.CreatedAt = testTime.Add(time.Duration(i%7) * time.Second)
			if err := tx.Insert(m); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	bdb, err := bbolt.Open(filepath.Join(dir, StoreFile), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = bdb.Update(func(tx *bbolt.Tx) error {
		for _, b := range [][]byte{bktLrec, bktLsig} {
			if err := tx.DeleteBucket(b); err != nil {
				return err
			}
		}
		sys := tx.Bucket(bktSys)
		return sys.Put(keySecondary, binary.BigEndian.AppendUint64(u64(2), getU64(sys, keySeq)))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := bdb.Close(); err != nil {
		t.Fatal(err)
	}
	check(dir)
}

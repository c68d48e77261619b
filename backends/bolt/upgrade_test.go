package bolt

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bbolt "go.etcd.io/bbolt"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/upgradetest"
)

// A store written by memos with store format 1 opens, is upgraded in
// place, and answers every read, history, as-of search and revert as it
// did before; afterwards its earlier versions are in packedVersion and
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
			if v[0] != packedVersion {
				t.Errorf("earlier version %x is in format %d, want %d", k, v[0], packedVersion)
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

// A store written by memos with store format 2, with the keyword index that
// release built, opens, is upgraded in place (records and audit entries
// packed, the index rebuilt with the current mapping), and answers every
// read, history, as-of search and revert as it did before.
func TestUpgradeFromV2(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "memory.bolt")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	upgradetest.Gunzip(t, "bolt-v2.bolt.gz", filepath.Join(dir, StoreFile))
	untar(t, filepath.Join(upgradetest.Dir(), "bolt-v2-index.tar.gz"), dir)
	var before map[string]uint64
	if err := func() error {
		db, err := bbolt.Open(filepath.Join(dir, StoreFile), 0o600, nil)
		if err != nil {
			return err
		}
		defer db.Close()
		before = formats(t, db)
		return nil
	}(); err != nil {
		t.Fatal(err)
	}
	if before["mem 1"] == 0 || before["ver 2"] == 0 || before["audit json"] == 0 {
		t.Fatalf("the fixture holds %v: want format 2 records and JSON audit entries", before)
	}
	var first *DB
	upgradetest.Check(t, "bolt-v2", func() (driver.Backend, error) {
		d, err := Open(ctx, Config{Path: dir})
		first = d
		return d, err
	})
	if first == nil || !first.remapped {
		t.Error("the first open kept the keyword index built with indexMapping 1; want it rebuilt")
	}
	d, err := Open(ctx, Config{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.remapped {
		t.Error("the second open rebuilt the keyword index again")
	}
	after := formats(t, d.bdb)
	// Check reverted memories since: more of each than before.
	if after["mem 3"] != before["mem 1"] || after["ver 4"] < before["ver 2"] || after["audit packed"] < before["audit json"] || len(after) != 3 {
		t.Errorf("records and audit entries by format: %v before the upgrade, %v after: want every one packed", before, after)
	}
	if err := d.bdb.View(func(tx *bbolt.Tx) error {
		if f := getU64(tx.Bucket(bktSys), keyFormat); f != storeFormat {
			t.Errorf("store format %d after the upgrade, want %d", f, storeFormat)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// formats counts the records of a store by bucket and format byte, and its
// audit entries by whether they are JSON or packed.
func formats(t *testing.T, db *bbolt.DB) map[string]uint64 {
	t.Helper()
	n := map[string]uint64{}
	err := db.View(func(tx *bbolt.Tx) error {
		for _, b := range [][]byte{bktMem, bktVer} {
			if err := tx.Bucket(b).ForEach(func(_, v []byte) error {
				n[fmt.Sprintf("%s %d", b, v[0])]++
				return nil
			}); err != nil {
				return err
			}
		}
		return tx.Bucket(bktAudit).ForEach(func(_, v []byte) error {
			if v[0] == '{' {
				n["audit json"]++
			} else {
				n["audit packed"]++
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// untar extracts the gzipped tar file into dir.
func untar(t *testing.T, file, dir string) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(p, 0o700)
		case tar.TypeReg:
			var b []byte
			if b, err = io.ReadAll(tr); err == nil {
				err = os.WriteFile(p, b, 0o600)
			}
		default:
			t.Fatalf("%s: unexpected entry %s", file, h.Name)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// An upgrade from format 2 that stopped half-way (some records packed, the
// store still format 2) completes at the next open, and the store answers
// as the release that wrote it did. The batches are made small so that the
// upgrade takes many transactions.
func TestUpgradeFromV2Resumes(t *testing.T) {
	ctx := context.Background()
	old := packBatch
	packBatch = 3
	t.Cleanup(func() { packBatch = old })
	dir := filepath.Join(t.TempDir(), "memory.bolt")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	upgradetest.Gunzip(t, "bolt-v2.bolt.gz", filepath.Join(dir, StoreFile))
	db, err := bbolt.Open(filepath.Join(dir, StoreFile), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		// What the first transaction of an interrupted upgrade did.
		next, err := rewrite(tx.Bucket(bktMem), nil, 4, func(v []byte) ([]byte, error) {
			_, d := decodeHead(v)
			head := len(v) - len(d.b)
			return pack(append([]byte{packedRecord}, v[1:head]...), d.b, true), d.err
		})
		if err == nil && next == nil {
			t.Error("rewrite of 4 records reached the end of the fixture's")
		}
		return err
	})
	if err == nil {
		n := formats(t, db)
		if n["mem 3"] != 4 || n["mem 1"] == 0 {
			t.Errorf("after the interrupted upgrade: %v, want 4 records packed and the rest not", n)
		}
		err = db.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	upgradetest.Check(t, "bolt-v2", func() (driver.Backend, error) {
		return Open(ctx, Config{Path: dir})
	})
	d, err := Open(ctx, Config{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if n := formats(t, d.bdb); len(n) != 3 || n["mem 3"] == 0 || n["ver 4"] == 0 || n["audit packed"] == 0 {
		t.Errorf("after the upgrade completed: %v, want every record and audit entry packed", n)
	}
}

// A store written by memos with secondary indexes of layout 3 (before the
// counts and the audit indexes of counts.go) and the keyword index that
// release built opens, gets the new indexes built at open, answers every
// read, history, as-of search and revert as it did before, and its counts
// and audit indexes answer what a scan of its memories and log does.
func TestUpgradeFromV3(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "memory.bolt")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	upgradetest.Gunzip(t, "bolt-v3.bolt.gz", filepath.Join(dir, StoreFile))
	untar(t, filepath.Join(upgradetest.Dir(), "bolt-v3-index.tar.gz"), dir)
	err := func() error {
		db, err := bbolt.Open(filepath.Join(dir, StoreFile), 0o600, nil)
		if err != nil {
			return err
		}
		defer db.Close()
		return db.View(func(tx *bbolt.Tx) error {
			mark := tx.Bucket(bktSys).Get(keySecondary)
			if len(mark) != 16 || binary.BigEndian.Uint64(mark) != 3 || tx.Bucket(bktFacet) != nil || tx.Bucket(bktAuditMem) != nil {
				t.Fatalf("the fixture's secondary indexes are of layout %x, with a facet bucket %v: want layout 3 without", mark, tx.Bucket(bktFacet) != nil)
			}
			return nil
		})
	}()
	if err != nil {
		t.Fatal(err)
	}
	upgradetest.Check(t, "bolt-v3", func() (driver.Backend, error) {
		return Open(ctx, Config{Path: dir})
	})
	d, err := Open(ctx, Config{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	err = d.View(ctx, func(tx driver.ReadTx) error {
		var all []*driver.Memory
		if err := tx.Scan(driver.ScanOptions{}, func(m *driver.Memory) error { all = append(all, m); return nil }); err != nil {
			return err
		}
		got, want, err := countsDump(tx, all)
		if err != nil {
			return err
		}
		if got != want {
			t.Errorf("counts and audit indexes:\n%s\nwant (from a scan)\n%s", got, want)
		}
		if !strings.Contains(want, "audit of") || !strings.Contains(want, "facet project:alpha") {
			t.Errorf("the fixture has too little to compare:\n%s", want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

//go:build linux

package bolt

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/query"
)

// mountTmpfs mounts a tmpfs of size bytes on a new directory. Where that is
// not allowed (it needs root or CAP_SYS_ADMIN) the test is skipped, saying
// so, except under CI=true, where it fails.
func mountTmpfs(t *testing.T, size int) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d", size)); err != nil {
		msg := fmt.Sprintf("cannot mount a %d KiB tmpfs on %s (%v); the full-disk test needs root or CAP_SYS_ADMIN", size>>10, dir, err)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	t.Cleanup(func() { syscall.Unmount(dir, 0) }) // before TempDir removes dir
	return dir
}

// fillDisk writes file until its file system has no room left.
func fillDisk(t *testing.T, file string) {
	t.Helper()
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return
			}
			t.Fatal(err)
		}
	}
}

// TestFullDiskOpensWithoutIndex: on a full disk, a store whose keyword
// index must be rebuilt (it is behind the records and here also gone, so
// that the rebuild needs room the disk does not have) still opens; every
// read works, keyword search included (scanning the records, with the
// index's results), writes fail saying what to do, and once there is room
// again the next write rebuilds the index.
func TestFullDiskOpensWithoutIndex(t *testing.T) {
	ctx := context.Background()
	mnt := mountTmpfs(t, 3<<20)
	dir := filepath.Join(mnt, "store")
	d := reopen(t, dir)
	err := d.Update(ctx, func(tx driver.Tx) error {
		for i := range 300 {
			if err := tx.Insert(testMemory(fmt.Sprintf("note %d about the harbour and the %d boats moored there", i, i%17))); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// A commit the index misses, as when the disk filled up after it.
	late := testMemory("stored while the index could not follow the harbour " + secretWord)
	if err := d.idx.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Update(ctx, func(tx driver.Tx) error { return tx.Insert(late) }); err != nil {
		t.Fatal(err)
	}
	if err := d.bdb.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, IndexDir)); err != nil {
		t.Fatal(err)
	}
	filler := filepath.Join(mnt, "filler")
	fillDisk(t, filler)

	d, err = Open(ctx, Config{Path: dir})
	if err != nil {
		t.Fatalf("open on a full disk with the keyword index to rebuild: %v; want the store open for reading", err)
	}
	defer func() { d.Close() }()
	if d.idx != nil {
		t.Fatal("the keyword index was rebuilt on a full disk; the test needs a disk without room for it")
	}
	if m, err := getMemory(d, late.ID); err != nil || m.Content != late.Content {
		t.Fatalf("get memory %d without the index: %v, %v", late.ID, m, err)
	}
	n := 0
	if err := d.View(ctx, func(tx driver.ReadTx) error {
		return tx.Scan(driver.ScanOptions{}, func(*driver.Memory) error { n++; return nil })
	}); err != nil || n != 301 {
		t.Fatalf("scan without the index: %d memories, %v; want 301", n, err)
	}
	st, err := d.BackendStats(ctx)
	if err != nil || st["memories"] != uint64(301) || st["keyword_index"] == nil {
		t.Fatalf("stats without the index: %v, %v; want 301 memories and the index reported unavailable", st, err)
	}
	queries := []query.Node{
		&query.Term{Text: secretWord},
		&query.Term{Text: "harbour"},
		&query.Or{Children: []query.Node{&query.Term{Text: "boats"}, &query.Phrase{Terms: []string{"note", "12"}}}},
		&query.Not{Positive: &query.Term{Text: "harbour"}, Negative: &query.Term{Text: "moored"}},
	}
	scanned := make([][]driver.Hit, len(queries))
	for i, q := range queries {
		if scanned[i], err = d.SearchKeyword(ctx, q, driver.Filter{}, 10); err != nil {
			t.Fatalf("keyword search %s without the index: %v", q.String(), err)
		}
	}
	if len(scanned[0]) != 1 || scanned[0][0].ID != late.ID {
		t.Fatalf("keyword search for the memory the index missed = %v; want memory %d", scanned[0], late.ID)
	}
	if len(scanned[1]) != 10 {
		t.Fatalf("keyword search harbour without the index: %d hits, want 10", len(scanned[1]))
	}

	err = d.Update(ctx, func(tx driver.Tx) error { return tx.Insert(testMemory("not stored: the disk is full")) })
	if !errors.Is(err, driver.ErrUnavailable) || !strings.Contains(err.Error(), "free disk space") {
		t.Fatalf("write on a full disk without the index: %v; want ErrUnavailable saying to free disk space", err)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if err := d.Update(ctx, func(tx driver.Tx) error { return tx.SetMeta("after", "space was freed") }); err != nil {
		t.Fatalf("write after space was freed: %v", err)
	}
	if d.idx == nil {
		t.Fatal("the write after space was freed did not rebuild the keyword index")
	}
	for i, q := range queries {
		hits, err := d.SearchKeyword(ctx, q, driver.Filter{}, 10)
		if err != nil || fmt.Sprint(hits) != fmt.Sprint(scanned[i]) {
			t.Fatalf("keyword search %s: with the rebuilt index %v (%v), without it %v", q.String(), hits, err, scanned[i])
		}
	}
}

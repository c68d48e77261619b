package bolt

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/query"
)

// searchWord returns the ids whose content has word.
func searchWord(t *testing.T, d *DB, word string) []int64 {
	t.Helper()
	hits, err := d.SearchKeyword(context.Background(), &query.Term{Text: word}, driver.Filter{}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, h := range hits {
		ids = append(ids, h.ID)
	}
	return ids
}

// TestOpenRepairsIndex damages the keyword index the ways a crash or a
// restore can, and checks that Open brings it back in line with the store.
func TestOpenRepairsIndex(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	d := reopen(t, dir)
	a, b, c := testMemory("apricot orchard"), testMemory("blueberry field"), testMemory("cherry tree")
	update(t, d, func(tx driver.Tx) error {
		for _, m := range []*driver.Memory{a, b, c} {
			if err := tx.Insert(m); err != nil {
				return err
			}
		}
		return nil
	})
	update(t, d, func(tx driver.Tx) error { return tx.Delete(c.ID) })
	next := b.Clone()
	next.Version, next.Content = 2, "blackberry field"

	// A commit whose index update is lost: the index keeps the old sequence
	// number and lacks the change, and has a document the store does not.
	seqBefore := decodeU64(must(d.idx.GetInternal(internalSeq)))
	update(t, d, func(tx driver.Tx) error { return tx.Put(next) })
	batch := d.idx.NewBatch()
	if err := batch.IndexAdvanced(newIndexDoc(b, []string{"blueberry", "field"}).doc); err != nil {
		t.Fatal(err)
	}
	if err := batch.IndexAdvanced(newIndexDoc(&driver.Memory{ID: 999, Content: "ghost"}, []string{"ghost"}).doc); err != nil {
		t.Fatal(err)
	}
	batch.SetInternal(internalSeq, u64(seqBefore))
	if err := d.idx.Batch(batch); err != nil {
		t.Fatal(err)
	}
	if got := searchWord(t, d, "blueberry"); len(got) != 1 {
		t.Fatalf("setting up the damage failed: blueberry finds %v", got)
	}
	d.Close()

	d = reopen(t, dir)
	if d.repaired != 1 {
		t.Errorf("Open found the index %d changes behind, want 1", d.repaired)
	}
	for word, want := range map[string][]int64{"blueberry": nil, "blackberry": {b.ID}, "ghost": nil, "apricot": {a.ID}, "cherry": nil} {
		if got := searchWord(t, d, word); !slices.Equal(got, want) {
			t.Errorf("after repair, %s finds %v, want %v", word, got, want)
		}
	}
	d.Close()

	// An index of another store is rebuilt; so is a missing one.
	other := reopen(t, filepath.Join(t.TempDir(), "other"))
	update(t, other, func(tx driver.Tx) error { return tx.Insert(testMemory("durian")) })
	other.Close()
	os.RemoveAll(filepath.Join(dir, IndexDir))
	if err := os.Rename(filepath.Join(other.Path(), IndexDir), filepath.Join(dir, IndexDir)); err != nil {
		t.Fatal(err)
	}
	d = reopen(t, dir)
	if got := searchWord(t, d, "durian"); len(got) != 0 {
		t.Errorf("the index of another store was kept: durian finds %v", got)
	}
	if got := searchWord(t, d, "apricot"); !slices.Equal(got, []int64{a.ID}) {
		t.Errorf("after rebuilding a foreign index, apricot finds %v", got)
	}
	d.Close()
	os.RemoveAll(filepath.Join(dir, IndexDir))
	d = reopen(t, dir)
	defer d.Close()
	if got := searchWord(t, d, "blackberry"); !slices.Equal(got, []int64{b.ID}) {
		t.Errorf("after rebuilding a missing index, blackberry finds %v", got)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestLockedStore opens a store a second time while it is open: bbolt's
// file lock makes the second Open wait Timeout and fail with ErrUnavailable,
// as it does for another process.
func TestLockedStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	d := reopen(t, dir)
	defer d.Close()
	_, err := Open(context.Background(), Config{Path: dir, Timeout: 50 * time.Millisecond})
	if err == nil {
		t.Fatal("a second Open of a store in use succeeded")
	}
	if driver.KindOf(err).Name != "unavailable" {
		t.Errorf("second Open: %v, want an error wrapping driver.ErrUnavailable", err)
	}
	t.Log(err)
}

package bolt

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"slices"

	"github.com/blevesearch/bleve/v2"
	bbolt "go.etcd.io/bbolt"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/query"
	"github.com/memos-go/memos/core/text"
)

const secretWord = "qzxwvkjplumbago"

// filesContaining lists the files under dir whose bytes contain s.
func filesContaining(t *testing.T, dir, s string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // removed while walking (an index merge of an open store)
		}
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if bytes.Contains(data, []byte(s)) {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// indexHasTerm reports whether the keyword index of the closed store in dir
// lists term in its dictionary.
func indexHasTerm(t *testing.T, dir, term string) bool {
	t.Helper()
	idx, err := bleve.Open(filepath.Join(dir, IndexDir))
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	adv, err := idx.Advanced()
	if err != nil {
		t.Fatal(err)
	}
	r, err := adv.Reader()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	dict, err := r.FieldDict(fieldContent)
	if err != nil {
		t.Fatal(err)
	}
	defer dict.Close()
	for {
		e, err := dict.Next()
		if err != nil {
			t.Fatal(err)
		}
		if e == nil {
			return false
		}
		if e.Term == term {
			return true
		}
	}
}

func update(t *testing.T, d *DB, fn func(tx driver.Tx) error) {
	t.Helper()
	if err := d.Update(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

func reopen(t *testing.T, dir string) *DB {
	t.Helper()
	d, err := Open(context.Background(), Config{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestForgetScrubsFiles shows that the secret is in both stores' files
// before Delete (so the check can fail) and in neither file after Delete and
// Close: bbolt's free pages are zeroed and bleve's segments are merged.
func TestForgetScrubsFiles(t *testing.T) {
	for _, heldReader := range []bool{false, true} {
		name := "NoReaders"
		if heldReader {
			name = "ReaderHeldDuringDelete"
		}
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "store")
			d := reopen(t, dir)
			victim := secretMemory("the vault code is " + secretWord + " until spring")
			update(t, d, func(tx driver.Tx) error {
				for i := range 200 {
					if err := tx.Insert(testMemory("filler memory number " + docID(int64(i)))); err != nil {
						return err
					}
				}
				return tx.Insert(victim)
			})
			next := victim.Clone()
			next.Version, next.Content = 2, "the vault code "+secretWord+" was rotated"
			update(t, d, func(tx driver.Tx) error { return tx.Put(next) })
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			if got := filesContaining(t, dir, secretWord); !slices.Contains(got, StoreFile) {
				t.Fatalf("before Delete, %s does not contain the secret (files with it: %v); the check below proves nothing", StoreFile, got)
			}
			if !indexHasTerm(t, dir, text.Stem(secretWord)) {
				t.Fatal("before Delete, the index does not list the secret's term")
			}

			d = reopen(t, dir)
			release := make(chan struct{})
			viewing := make(chan struct{})
			done := make(chan error, 1)
			if heldReader {
				scrubWait = 20 * time.Millisecond
				t.Cleanup(func() { scrubWait = 2 * time.Second })
				go func() {
					done <- d.View(context.Background(), func(tx driver.ReadTx) error {
						close(viewing)
						<-release
						return nil
					})
				}()
				<-viewing
			}
			update(t, d, func(tx driver.Tx) error { return tx.Delete(victim.ID) })
			if heldReader {
				if !d.scrubFile.Load() {
					t.Error("the scrub did not wait for a reader that began before the Delete")
				}
				close(release)
				if err := <-done; err != nil {
					t.Fatal(err)
				}
			}
			hits, err := d.SearchKeyword(context.Background(), &query.Term{Text: secretWord}, driver.Filter{}, 10)
			if err != nil || len(hits) != 0 {
				t.Errorf("search for the secret after Delete = %v, %v; want nothing", hits, err)
			}
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			if got := filesContaining(t, dir, secretWord); len(got) > 0 {
				t.Errorf("after Delete and Close, files %v still contain the secret", got)
			}
			if indexHasTerm(t, dir, text.Stem(secretWord)) {
				t.Error("after Delete and Close, the index still lists the secret's term")
			}
			d = reopen(t, dir)
			defer d.Close()
			if err := d.bdb.View(func(tx *bbolt.Tx) error {
				for err := range tx.Check() {
					return err
				}
				return nil
			}); err != nil {
				t.Errorf("bbolt consistency check after the scrub: %v", err)
			}
		})
	}
}

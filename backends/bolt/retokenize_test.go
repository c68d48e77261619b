package bolt

import (
	"context"
	"encoding/binary"
	"path/filepath"
	"testing"

	"github.com/blevesearch/bleve/v2"
	bbolt "go.etcd.io/bbolt"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/query"
	"github.com/memos-go/memos/core/text"
)

// A store whose token counts and keyword index were made by the tokenizer
// before version 2 (Go's Unicode tables) is brought up to date at open: the
// counts of its non-ASCII records and keyTokens are recounted, the index
// is rebuilt, and a query of Korean or Russian words finds what FTS5 would.
// The older tokenizer's counts are stood in for by wrong ones.
func TestRetokenize(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "store")
	d, err := Open(ctx, Config{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	contents := []string{"서울에서 한국 음식을 먹었다", "Маша ела ёлку на Новый год", "plain ASCII text stays as it was"}
	ids := map[string]int64{}
	if err := d.Update(ctx, func(tx driver.Tx) error {
		for _, c := range contents {
			m := testMemory(c)
			if err := tx.Insert(m); err != nil {
				return err
			}
			ids[c] = m.ID
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, c := range contents {
		want += len(text.Tokenize(c))
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}

	// Make it the store an older memos left: other counts for the
	// non-ASCII records and in keyTokens, no tokenizer version, an index of
	// mapping 3.
	db, err := bbolt.Open(filepath.Join(dir, StoreFile), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bbolt.Tx) error {
		mem, sys := tx.Bucket(bktMem), tx.Bucket(bktSys)
		total := 0
		for _, c := range contents {
			key := binary.BigEndian.AppendUint64(nil, uint64(ids[c]))
			m, h, err := decodeRecord(ids[c], mem.Get(key))
			if err != nil {
				return err
			}
			n := h.NTok
			if !text.IsASCII(c) {
				n = 99
			}
			total += n
			rec, err := encodeRecord(m, h.Seq, n)
			if err != nil {
				return err
			}
			if err := mem.Put(key, rec); err != nil {
				return err
			}
		}
		if err := sys.Delete(keyTokenizer); err != nil {
			return err
		}
		return sys.Put(keyTokens, u64(uint64(total)))
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	idx, err := bleve.OpenUsing(filepath.Join(dir, IndexDir), mergePlan())
	if err != nil {
		t.Fatal(err)
	}
	if err := idx.SetInternal(internalMapping, u64(3)); err != nil {
		t.Fatal(err)
	}
	idx.Close()

	check := func(d *DB) {
		t.Helper()
		if err := d.bdb.View(func(tx *bbolt.Tx) error {
			sys := tx.Bucket(bktSys)
			if v, n := getU64(sys, keyTokenizer), getU64(sys, keyTokens); v != tokenizerVersion || n != uint64(want) {
				t.Errorf("tokenizer version %d, tokens %d; want %d, %d", v, n, tokenizerVersion, want)
			}
			for _, c := range contents {
				_, h, err := decodeRecord(ids[c], tx.Bucket(bktMem).Get(binary.BigEndian.AppendUint64(nil, uint64(ids[c]))))
				if err != nil {
					return err
				}
				if h.NTok != len(text.Tokenize(c)) {
					t.Errorf("%q counts %d tokens, want %d", c, h.NTok, len(text.Tokenize(c)))
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if d.kstats.tokens != uint64(want) {
			t.Errorf("keyword statistics hold %d tokens, want %d", d.kstats.tokens, want)
		}
		for q, c := range map[string]string{"한국": contents[0], "ёлку": contents[1]} {
			hits, err := d.SearchKeyword(ctx, query.Natural(q), driver.Filter{}, 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(hits) != 1 || hits[0].ID != ids[c] {
				t.Errorf("search %q: %v, want memory %d", q, hits, ids[c])
			}
		}
	}
	d, err = Open(ctx, Config{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	if !d.remapped {
		t.Error("the index of mapping 3 was kept; want it rebuilt")
	}
	check(d)
	d.Close()
	d, err = Open(ctx, Config{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.remapped {
		t.Error("the second open rebuilt the index again")
	}
	check(d)
}

package sqlite

import (
	"context"
	"database/sql"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memos-go/memos/core/backendtest"
	"github.com/memos-go/memos/core/backendtest/devbench"
	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/query"
	"github.com/memos-go/memos/core/text"
)

// storedFrontiers reads every frontier kept beside the index.
func storedFrontiers(t *testing.T, q interface {
	Query(string, ...any) (*sql.Rows, error)
}) map[string]text.Frontier {
	t.Helper()
	rows, err := q.Query(`SELECT term, pts FROM memories_fts_bound`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]text.Frontier{}
	for rows.Next() {
		var term string
		var b []byte
		if err := rows.Scan(&term, &b); err != nil {
			t.Fatal(err)
		}
		f, err := text.DecodeFrontier(b)
		if err != nil {
			t.Fatal(err)
		}
		out[term] = f
	}
	return out
}

// rebuiltFrontiers returns the frontiers rebuildBounds makes from FTS5's
// instances, without keeping them.
func rebuiltFrontiers(t *testing.T, d *DB) map[string]text.Frontier {
	t.Helper()
	ctx := context.Background()
	tx, err := d.w.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if err := rebuildBounds(ctx, tx); err != nil {
		t.Fatal(err)
	}
	return storedFrontiers(t, tx)
}

// TestBoundsTight checks that the frontiers kept at each write, from
// contents tokenized here, are exactly those built from FTS5's own
// instances and lengths, on real text (dev turns) and on contents that
// exercise the tokenizer (case, diacritics, other scripts, emoji).
func TestBoundsTight(t *testing.T) {
	ctx := context.Background()
	n := 3000
	if raceEnabled {
		n = 500
	}
	ms, _, err := backendtest.BenchWorkload(n)
	if err != nil {
		t.Fatal(err)
	}
	devbench.WithDevText(t, ms, devbench.DataDir)
	for i, s := range pruneTexts {
		ms[i*7].Content = s
	}
	d, err := Open(ctx, Config{Path: filepath.Join(t.TempDir(), "memory.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	// In several transactions, so that frontiers are read back and grown.
	for i := 0; i < len(ms); i += 700 {
		backendtest.InsertAll(t, d, ms[i:min(i+700, len(ms))])
	}
	checkStoredBounds(t, d)
	got, want := storedFrontiers(t, d.r), rebuiltFrontiers(t, d)
	if len(got) != len(want) {
		t.Fatalf("%d frontiers kept, %d built from the index", len(got), len(want))
	}
	for term, f := range want {
		if !slices.Equal(got[term], f) {
			t.Fatalf("frontier of %q kept %v, built from the index %v", term, got[term], f)
		}
	}
}

// TestBoundsPending checks the rows the frontiers do not cover yet: rows
// written with plain SQL (as a MemU import does) are pending until the
// next write through memos or the next Open, and while any row is pending
// every phrase is bounded by MaxTerm, so that a row scoring above the
// stored frontiers still ranks. A content FTS5 and memos tokenize
// differently (invalid UTF-8) stays pending until it is deleted. A term
// that no row has any more, after an update or a delete, keeps no
// frontier.
func TestBoundsPending(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	d, err := Open(ctx, Config{Path: path, KeywordPruneRows: 10})
	if err != nil {
		t.Fatal(err)
	}
	ms, _, err := backendtest.BenchWorkload(201)
	if err != nil {
		t.Fatal(err)
	}
	xyloRow := ms[200]
	ms = ms[:200]
	// Apple in a third of the rows, all of 15 tokens; plum in 5 rows of
	// 120 tokens, which score below apple's MaxTerm and above what apple
	// adds to any row written through memos.
	filler := func(n int) string {
		words := strings.Fields("the weather was mild and the garden grew tall by the river in spring")
		var b strings.Builder
		for i := range n {
			b.WriteString(" " + words[i%len(words)])
		}
		return b.String()
	}
	for i, m := range ms {
		switch {
		case i%40 == 1:
			m.Content = "plum" + filler(119)
		case i%3 == 0:
			m.Content = "apple" + filler(14)
		default:
			m.Content = "pear" + filler(14)
		}
	}
	backendtest.InsertAll(t, d, ms)
	checkStoredBounds(t, d)
	q := &query.Or{Children: []query.Node{&query.Term{Text: "plum"}, &query.Term{Text: "apple"}}}
	pending := func(want int) {
		t.Helper()
		var n int
		if err := d.r.QueryRow(`SELECT count(*) FROM memories_fts_pending`).Scan(&n); err != nil || n != want {
			t.Fatalf("%d rows pending (%v), want %d", n, err, want)
		}
	}
	// appleBound returns apple's bound and MaxTerm.
	appleBound := func() (float64, float64) {
		t.Helper()
		tx, err := d.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		var avg []byte
		if err := tx.QueryRow(`SELECT block FROM memories_fts_data WHERE id = ?`, ftsAveragesID).Scan(&avg); err != nil {
			t.Fatal(err)
		}
		corpus, _ := decodeAverages(avg)
		p := prunable(q)[1]
		p.idf = corpus.IDF(67)
		if err := d.phraseBounds(ctx, tx, []*prunePhrase{p}, corpus, nil); err != nil {
			t.Fatal(err)
		}
		return p.max, text.MaxTerm(p.idf)
	}
	search := func(step string) []driver.Hit {
		t.Helper()
		got, err := d.SearchKeyword(ctx, q, driver.Filter{}, 3)
		if err != nil {
			t.Fatal(err)
		}
		want, err := d.searchPlain(ctx, q.String(), "", nil, 3)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s:\n got %s\nwant %s", step, backendtest.FormatHits(got), backendtest.FormatHits(want))
		}
		return got
	}
	got := search("through memos")
	if b, m := appleBound(); b >= m || got[2].Score <= b || got[2].Score >= m {
		t.Fatalf("apple's bound %g, MaxTerm %g, third score %g: want bound < third score < MaxTerm", b, m, got[2].Score)
	}

	// A short row with many apples scores above apple's stored frontier.
	if _, err := d.w.Exec(`INSERT INTO memories (content) VALUES ('apple apple apple apple apple apple')`); err != nil {
		t.Fatal(err)
	}
	pending(1)
	if b, m := appleBound(); b != m {
		t.Fatalf("apple's bound %g while a row is pending; want MaxTerm %g", b, m)
	}
	if got := search("a row written with plain SQL"); got[0].ID != int64(len(ms)+1) {
		t.Fatalf("the short row does not rank first: %s", backendtest.FormatHits(got))
	}
	// Invalid UTF-8, written with plain SQL: it stays pending.
	if _, err := d.w.Exec(`INSERT INTO memories (content) VALUES (CAST(X'6170706c6520ff20706c756d' AS TEXT))`); err != nil {
		t.Fatal(err)
	}
	xyloRow.Content = "xylophone lessons on Tuesday"
	backendtest.InsertAll(t, d, []*driver.Memory{xyloRow})
	pending(1)
	search("a row that stays pending")
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if d, err = Open(ctx, Config{Path: path, KeywordPruneRows: 10}); err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	pending(1)
	bad := int64(len(ms) + 2)
	if err := d.Update(ctx, func(tx driver.Tx) error { return tx.Delete(bad) }); err != nil {
		t.Fatal(err)
	}
	pending(0)
	checkStoredBounds(t, d)
	search("after the delete")

	// The xylophone row changes its content, then is forgotten: its
	// words' frontiers go with the last row that has them.
	xylo := int64(len(ms) + 3)
	has := func(term string) bool { _, ok := storedFrontiers(t, d.r)[term]; return ok }
	if !has("xylophon") || !has("tuesdai") {
		t.Fatalf("no frontiers for the xylophone row's words: %v", slices.Sorted(maps.Keys(storedFrontiers(t, d.r))))
	}
	err = d.Update(ctx, func(tx driver.Tx) error {
		m, err := tx.Get(xylo, 0)
		if err != nil {
			return err
		}
		m.Content, m.Version = "xylophone lessons moved", m.Version+1
		return tx.Put(m)
	})
	if err != nil {
		t.Fatal(err)
	}
	if has("tuesdai") || !has("move") {
		t.Fatal("after the update, the frontiers do not follow the content")
	}
	checkStoredBounds(t, d)
	if err := d.Update(ctx, func(tx driver.Tx) error { return tx.Delete(xylo) }); err != nil {
		t.Fatal(err)
	}
	if has("xylophon") || has("move") {
		t.Fatal("a forgotten word keeps its frontier")
	}
	checkStoredBounds(t, d)
}

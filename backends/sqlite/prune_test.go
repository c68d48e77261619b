package sqlite

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/memos-go/memos/core/backendtest"
	"github.com/memos-go/memos/core/backendtest/devbench"
	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/query"
	"github.com/memos-go/memos/core/text"
)

// pruneTexts are contents that exercise the scorer's tokenizer: upper
// case, digits, Latin letters with diacritics (precomposed and combining),
// other scripts, emoji with a variation selector, punctuation.
var pruneTexts = []string{
	"Alice's CAFÉ in São Paulo serves café au lait; Alice likes it.",
	"Cafe\u0301 and cafe are one token; naïve NAÏVE naive.",
	"I ❤️ jazz — really, I love JAZZ!!! jazz-age music…",
	"東京 trip: Alice visited 東京 and Kyoto in 2024 (twice).",
	"Straße strasse ½ ² ǅ dz Ωmega ohm",
	"open-source tools: open source, opensource, OPEN SOURCE.",
	"The running runner runs; he ran and will run again.",
}

// TestPrunedSearch checks the two-phase keyword search against FTS5 on a
// real store of dev turns (or the bench workload without the shared data):
// for natural-language questions and random ORs of words and phrases,
// unfiltered and filtered, with a small row budget so that most searches
// take two phases: every score it returns is bit-identical to FTS5's bm25
// for that row; every result is exactly FTS5's (ids, order, scores),
// whether the two phases or FTS5 answered; with keyword_prune_rows -1
// every result is FTS5's.
func TestPrunedSearch(t *testing.T) {
	ctx := context.Background()
	n := 4000
	if raceEnabled {
		n = 1000 // see below: the race detector slows SQLite some 30 times
	}
	ms, _, err := backendtest.BenchWorkload(n)
	if err != nil {
		t.Fatal(err)
	}
	// Real text: dev turns in the workload's memories (namespaces, types).
	questions := devbench.WithDevText(t, ms, devbench.DataDir)
	for i, s := range pruneTexts {
		ms[i*7].Content = s
	}
	path := filepath.Join(t.TempDir(), "memory.db")
	d, err := Open(ctx, Config{Path: path, KeywordPruneRows: 150})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	contents := backendtest.FillPruneStore(t, d, ms)
	checkStoredBounds(t, d)
	exact, err := Open(ctx, Config{Path: path, KeywordPruneRows: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer exact.Close()

	// Queries: the dev questions as the engine rewrites them, and random
	// ORs of common and rare words and two-word phrases.
	queries := backendtest.PruneQueries(contents, questions, 400, 1)
	for i, s := range pruneTexts {
		if q := query.Natural(s); q != nil && i%2 == 0 {
			queries = append(queries, q)
		}
	}

	if raceEnabled {
		// Under the race detector SQLite runs some 30 times slower: every
		// 40th query (all kinds stay); .ci/run runs them all without it.
		queries = backendtest.EveryNth(queries, 40)
	}

	filters := []driver.Filter{
		{},
		{Namespaces: []string{ms[0].Namespace}, Statuses: []driver.Status{driver.StatusActive}},
		{Types: []driver.Type{driver.TypeLesson}},
	}
	scoreOf, err := d.r.PrepareContext(ctx, `SELECT -bm25(memories_fts) FROM memories_fts WHERE memories_fts MATCH ? AND rowid = ?`)
	if err != nil {
		t.Fatal(err)
	}
	defer scoreOf.Close()
	var outcomes [3]int
	for i, q := range queries {
		f := filters[i%len(filters)]
		limit := []int{10, 30, 5}[i/len(filters)%3]
		want, err := exact.SearchKeyword(ctx, q, f, limit)
		if err != nil {
			t.Fatal(err)
		}
		if where, fargs := filterSQL(f); where == "" {
			plain, err := d.searchPlain(ctx, q.String(), "", nil, limit)
			if err != nil || !slices.Equal(plain, want) {
				t.Fatalf("keyword_prune_rows -1: %s = %s, %v; FTS5: %s", q, backendtest.FormatHits(want), err, backendtest.FormatHits(plain))
			}
		} else {
			plain, err := d.searchPlain(ctx, q.String(), where, fargs, limit)
			if err != nil || !slices.Equal(plain, want) {
				t.Fatalf("keyword_prune_rows -1: %s (%+v) = %s, %v; FTS5: %s", q, f, backendtest.FormatHits(want), err, backendtest.FormatHits(plain))
			}
		}
		var before [3]int64
		for k := range before {
			before[k] = d.pruneCounts[k].Load()
		}
		got, err := d.SearchKeyword(ctx, q, f, limit)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		outcome := -1
		for k := range before {
			if d.pruneCounts[k].Load() != before[k] {
				outcome = k
			}
		}
		if outcome < 0 {
			t.Fatalf("%s: no outcome counted", q)
		}
		outcomes[outcome]++
		for _, h := range got {
			var s float64
			if err := scoreOf.QueryRowContext(ctx, q.String(), h.ID).Scan(&s); err != nil {
				t.Fatalf("%s: FTS5 score of %d: %v", q, h.ID, err)
			}
			if s != h.Score {
				pruneDebug(t, d, q, h.ID)
				t.Fatalf("%s: row %d scored %.17g; FTS5's bm25: %.17g", q, h.ID, h.Score, s)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s (outcome %d, limit %d, filter %+v):\n got %s\nwant %s", q, outcome, limit, f, backendtest.FormatHits(got), backendtest.FormatHits(want))
		}
	}
	t.Logf("%d queries: not prunable %d, FTS5 %d, proved %d",
		len(queries), outcomes[pruneNotTried], outcomes[pruneExact], outcomes[pruneProved])
	if outcomes[pruneProved] == 0 || outcomes[pruneExact] == 0 {
		t.Errorf("outcomes %v: want searches both proved and answered by FTS5", outcomes)
	}
}

func TestPruneRowsConfig(t *testing.T) {
	_, err := Open(context.Background(), Config{Path: filepath.Join(t.TempDir(), "m.db"), KeywordPruneRows: -2})
	if !errors.Is(err, driver.ErrInvalid) || !strings.Contains(err.Error(), "keyword_prune_rows") {
		t.Fatalf("keyword_prune_rows -2: %v; want ErrInvalid naming the key", err)
	}
}

func TestSQLiteVarint(t *testing.T) {
	for _, c := range []struct {
		b    []byte
		v    uint64
		size int
	}{
		{[]byte{0x05}, 5, 1}, {[]byte{0x81, 0x00}, 128, 2}, {[]byte{0xff, 0x7f}, 0x3fff, 2},
		{[]byte{0x86, 0xc3, 0x17, 0x99}, 106_903, 3}, {[]byte{0x81}, 0, 0},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 1<<64 - 1, 9},
	} {
		if v, n := sqliteVarint(c.b); v != c.v || n != c.size {
			t.Errorf("sqliteVarint(% x) = %d, %d; want %d, %d", c.b, v, n, c.v, c.size)
		}
	}
}

func pruneDebug(t *testing.T, d *DB, q query.Node, id int64) {
	ctx := context.Background()
	var avg []byte
	d.r.QueryRowContext(ctx, qFTSRecord, ftsAveragesID).Scan(&avg)
	c, _ := decodeAverages(avg)
	var n, sz int64
	d.r.QueryRowContext(ctx, `SELECT count(*) FROM memories_fts_docsize`).Scan(&n)
	t.Logf("averages %+v docsize rows %d", c, n)
	var blob []byte
	d.r.QueryRowContext(ctx, `SELECT sz FROM memories_fts_docsize WHERE id = ?`, id).Scan(&blob)
	v, _ := sqliteVarint(blob)
	sz = int64(v)
	var content string
	d.r.QueryRowContext(ctx, `SELECT content FROM memories WHERE id = ?`, id).Scan(&content)
	t.Logf("docsize %d (% x) tokenize %d", sz, blob, len(text.Tokenize(content)))
	for _, p := range prunable(q) {
		var df, cnt int64
		d.r.QueryRowContext(ctx, qVocabDF, p.stems[0]).Scan(&df)
		d.r.QueryRowContext(ctx, qPhraseDF, p.node.String()).Scan(&cnt)
		t.Logf("%s stems %v vocab %d match %d", p.node, p.stems, df, cnt)
	}
}

// TestAlnumMask checks the eight-bytes-at-a-time classification against
// asciiClass for every ASCII byte in every position.
func TestAlnumMask(t *testing.T) {
	for b := range 128 {
		for pos := range 8 {
			w := uint64(b) << (8 * pos)
			want := uint64(0)
			if asciiClass[b] == 1 || asciiClass[b] == 2 {
				want = 0x80 << (8 * pos)
			}
			// The other bytes are NUL (not alphanumeric).
			if got := alnumMask(w); got != want {
				t.Fatalf("alnumMask(%q at %d) = %#x, want %#x", rune(b), pos, got, want)
			}
		}
	}
}

// TestPruneFollowsWrites checks that the cached document frequencies and
// row lengths follow the index: after each write (insert, content update,
// delete, and an update through another handle, as another process would
// write) the two-phase search's scores are still FTS5's.
func TestPruneFollowsWrites(t *testing.T) {
	ctx := context.Background()
	d, ms := weatherNotes(t)
	insert := func(batch []*driver.Memory) {
		t.Helper()
		err := d.Update(ctx, func(tx driver.Tx) error {
			for _, m := range batch {
				if err := tx.Insert(m); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	insert(ms[:200])
	q := &query.Or{Children: []query.Node{&query.Term{Text: "zebra"}, &query.Term{Text: "weather"}, &query.Term{Text: "team"}}}
	check := func(step string, wantOutcome pruneOutcome) {
		t.Helper()
		before := d.pruneCounts[wantOutcome].Load()
		got, err := d.SearchKeyword(ctx, q, driver.Filter{}, 5)
		if err != nil {
			t.Fatal(err)
		}
		if d.pruneCounts[wantOutcome].Load() == before {
			t.Fatalf("%s: the search was not answered with outcome %d", step, wantOutcome)
		}
		want, err := d.searchPlain(ctx, q.String(), "", nil, 5)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range got {
			var s float64
			err := d.r.QueryRowContext(ctx, `SELECT -bm25(memories_fts) FROM memories_fts WHERE memories_fts MATCH ? AND rowid = ?`, q.String(), h.ID).Scan(&s)
			if err != nil || s != h.Score {
				t.Fatalf("%s: row %d scored %.17g; FTS5: %.17g (%v)", step, h.ID, h.Score, s, err)
			}
		}
		if wantOutcome == pruneProved && !slices.Equal(got, want) {
			t.Fatalf("%s:\n got %s\nwant %s", step, backendtest.FormatHits(got), backendtest.FormatHits(want))
		}
	}
	check("first", pruneProved)
	insert(ms[200:])
	check("after an insert", pruneProved)
	err := d.Update(ctx, func(tx driver.Tx) error {
		m, err := tx.Get(5, 0)
		if err != nil {
			return err
		}
		m.Content = "zebra zebra zebra weather"
		m.Version++
		return tx.Put(m)
	})
	if err != nil {
		t.Fatal(err)
	}
	check("after an update", pruneProved)
	err = d.Update(ctx, func(tx driver.Tx) error { return tx.Delete(11) })
	if err != nil {
		t.Fatal(err)
	}
	check("after a delete", pruneProved)

	// A row whose length the last search cached grows through a second
	// handle: a stale length would give it the old score.
	cached := d.prune.lengths[ms[20].ID]
	if cached == 0 {
		t.Fatalf("row %d's length is not cached after a search that read it (%d cached)", ms[20].ID, len(d.prune.lengths))
	}
	other, err := Open(ctx, Config{Path: d.path, KeywordPruneRows: 40})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	err = other.Update(ctx, func(tx driver.Tx) error {
		m, err := tx.Get(ms[20].ID, 0)
		if err != nil {
			return err
		}
		m.Content += strings.Repeat(" and then some more words", 8)
		m.Version++
		return tx.Put(m)
	})
	if err != nil {
		t.Fatal(err)
	}
	hits := d.pruneReads[1].Load()
	check("after another handle's update", pruneProved)
	if d.pruneReads[1].Load() == hits {
		t.Fatal("no length was read after another handle's update")
	}
	if n := d.prune.lengths[ms[20].ID]; n != 0 && n <= cached {
		t.Fatalf("row %d: %d tokens cached after it grew from %d", ms[20].ID, n, cached)
	}
	// An unchanged index: the lengths come from the cache.
	hits = d.pruneReads[1].Load()
	check("again", pruneProved)
	if n := d.pruneReads[1].Load() - hits; n != 0 {
		t.Fatalf("%d lengths read again from an unchanged index", n)
	}
}

// TestBoundHeap checks that candidates leave the heap in the order rank
// takes them: best bound first, ties by id.
func TestBoundHeap(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(0, 200).Draw(rt, "n")
		var h boundHeap
		for i := range n {
			h = append(h, &prunedDoc{id: int64(rapid.IntRange(0, 1000).Draw(rt, "id")*1000 + i), upper: float64(rapid.IntRange(0, 5).Draw(rt, "upper"))})
		}
		want := slices.Clone(h)
		slices.SortFunc(want, func(a, b *prunedDoc) int {
			if c := cmp.Compare(b.upper, a.upper); c != 0 {
				return c
			}
			return cmp.Compare(a.id, b.id)
		})
		h.init()
		for _, w := range want {
			if got := h.pop(); got != w {
				rt.Fatalf("popped %d (%g); want %d (%g)", got.id, got.upper, w.id, w.upper)
			}
		}
	})
}

// weatherNotes opens a store with keyword_prune_rows 40 (closed when t
// ends) and returns it with 300 memories, not yet inserted: the same note
// with its number, and every tenth about the zebra project.
func weatherNotes(t *testing.T) (*DB, []*driver.Memory) {
	t.Helper()
	d, ms := workloadStore(t, 300, Config{KeywordPruneRows: 40})
	for i, m := range ms {
		m.Content = fmt.Sprintf("note %d: the weather was fine and the team met", i)
		if i%10 == 0 {
			m.Content += " about the zebra project"
		}
	}
	return d, ms
}

// workloadStore opens a new store with cfg (its Path in a directory t
// removes; closed when t ends) and returns it with n memories of
// backendtest.BenchWorkload, not yet inserted.
func workloadStore(t *testing.T, n int, cfg Config) (*DB, []*driver.Memory) {
	t.Helper()
	cfg.Path = filepath.Join(t.TempDir(), "memory.db")
	d, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	ms, _, err := backendtest.BenchWorkload(n)
	if err != nil {
		t.Fatal(err)
	}
	return d, ms
}

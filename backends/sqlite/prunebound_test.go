package sqlite

import (
	"context"
	"database/sql"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memos-go/memos/core/backendtest"
	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/longtest"
	"github.com/memos-go/memos/core/query"
	"github.com/memos-go/memos/core/text"
)

// TestPruneBounds checks the bounds the two-phase keyword search ranks by,
// under random inserts, content updates and deletes: after each batch of
// writes, for random ORs of terms and two-word phrases, the postings it
// reads are FTS5's matches (the rows of each phrase, and for a term its
// instances); every candidate's bound, without and with its length, is at
// least its FTS5 bm25; and a row that has none of the rare phrases scores
// below the common phrases' bound. The search itself, with a small row
// budget, returns FTS5's result.
func TestPruneBounds(t *testing.T) {
	ctx := context.Background()
	d, err := Open(ctx, Config{Path: filepath.Join(t.TempDir(), "memory.db"), KeywordPruneRows: 20})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	rng := rand.New(rand.NewPCG(35, 1))
	// A small vocabulary, some words far more frequent than others, and
	// inflected forms that share a stem: many rows match, with many
	// instances.
	words := strings.Fields("apple apples banana cherry dog dogs running runs ran zebra quantum violin " +
		"kettle harbor meadow orbit pencil river stone tulip umbrella walnut yacht")
	content := func() string {
		n := 1 + rng.IntN(40)
		if rng.IntN(8) == 0 {
			n += 200 // a few long rows
		}
		var b strings.Builder
		for range n {
			i := int(float64(len(words)) * rng.Float64() * rng.Float64()) // skewed to the front
			w := words[i]
			if rng.IntN(10) == 0 {
				w = strings.ToUpper(w)
			}
			b.WriteString(w)
			b.WriteString([]string{" ", ", ", ". ", "-"}[rng.IntN(4)])
		}
		return b.String()
	}
	ms, _, err := backendtest.BenchWorkload(600)
	if err != nil {
		t.Fatal(err)
	}
	var live []int64
	next := 0
	// Full size only without the race detector (.ci/run runs it so, beside
	// TestPrunedSearch); under -race the checks take some 30 times longer.
	steps, queries := longtest.Pick(4, 12), longtest.Pick(10, 25)
	if raceEnabled {
		steps, queries = 3, 8
	}
	for step := range steps {
		err := d.Update(ctx, func(tx driver.Tx) error {
			for range 40 + rng.IntN(40) {
				switch op := rng.IntN(10); {
				case op < 6 && next < len(ms) || len(live) == 0:
					m := ms[next]
					next++
					m.Content = content()
					if err := tx.Insert(m); err != nil {
						return err
					}
					live = append(live, m.ID)
				case op < 8:
					m, err := tx.Get(live[rng.IntN(len(live))], 0)
					if err != nil {
						return err
					}
					m.Content = content()
					m.Version++
					if err := tx.Put(m); err != nil {
						return err
					}
				default:
					i := rng.IntN(len(live))
					if err := tx.Delete(live[i]); err != nil {
						return err
					}
					live = slices.Delete(live, i, i+1)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		checkStoredBounds(t, d)
		for range queries {
			var kids []query.Node
			for range 2 + rng.IntN(4) {
				w := words[rng.IntN(len(words))]
				if rng.IntN(5) == 0 {
					kids = append(kids, &query.Phrase{Terms: []string{w, words[rng.IntN(len(words))]}})
				} else {
					kids = append(kids, &query.Term{Text: w})
				}
			}
			q := &query.Or{Children: kids}
			checkPruneBounds(t, d, q, rng)
			for _, limit := range []int{1, 5, 20} {
				got, err := d.SearchKeyword(ctx, q, driver.Filter{}, limit)
				if err != nil {
					t.Fatal(err)
				}
				want, err := d.searchPlain(ctx, q.String(), "", nil, limit)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("step %d, %s, limit %d:\n got %s\nwant %s", step, q, limit, backendtest.FormatHits(got), backendtest.FormatHits(want))
				}
			}
		}
	}
}

// checkPruneBounds checks the postings and bounds of q's phrases (see
// TestPruneBounds), with a random split into rare and common phrases.
func checkPruneBounds(t *testing.T, d *DB, q *query.Or, rng *rand.Rand) {
	t.Helper()
	ctx := context.Background()
	phrases := prunable(q)
	tx, err := d.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var avg []byte
	if err := tx.QueryRowContext(ctx, qFTSRecord, ftsAveragesID).Scan(&avg); err != nil {
		t.Fatal(err)
	}
	corpus, _ := decodeAverages(avg)
	idf := make([]float64, len(phrases))
	for i, p := range phrases {
		if err := tx.QueryRowContext(ctx, qPhraseDF, p.node.String()).Scan(&p.df); err != nil {
			t.Fatal(err)
		}
		p.idf = corpus.IDF(uint64(p.df))
		idf[i] = p.idf
	}
	// FTS5's score of every row that matches q, and its matches of each
	// phrase with their instances.
	fts := map[int64]float64{}
	rows, err := tx.QueryContext(ctx, `SELECT rowid, -bm25(memories_fts) FROM memories_fts WHERE memories_fts MATCH ?`, q.String())
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		var s float64
		if err := rows.Scan(&id, &s); err != nil {
			t.Fatal(err)
		}
		fts[id] = s
	}
	rows.Close()
	// The phrases' bounds from the stored frontiers: no row that has a
	// phrase scores more for it (checked against FTS5 below).
	if err := d.phraseBounds(ctx, tx, phrases, corpus, nil); err != nil {
		t.Fatal(err)
	}
	maxTerm := make([]float64, len(phrases))
	for i, p := range phrases {
		maxTerm[i] = p.max
		if p.max > text.MaxTerm(p.idf) {
			t.Fatalf("%s: bound of %s %g above MaxTerm %g", q, p.node, p.max, text.MaxTerm(p.idf))
		}
		rows, err := tx.QueryContext(ctx, `SELECT rowid, -bm25(memories_fts) FROM memories_fts WHERE memories_fts MATCH ?`, p.node.String())
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id int64
			var s float64
			if err := rows.Scan(&id, &s); err != nil {
				t.Fatal(err)
			}
			if s > text.RoundUp(p.max) {
				t.Fatalf("%s: row %d scores %.17g for %s alone, above its bound %.17g", q, id, s, p.node, p.max)
			}
		}
		rows.Close()
	}
	rk := &pruneRanker{d: d, ctx: ctx, tx: tx, corpus: corpus, idf: idf, maxTerm: maxTerm}
	var structure []byte
	if err := tx.QueryRowContext(ctx, qFTSRecord, ftsStructureID).Scan(&structure); err != nil {
		t.Fatal(err)
	}
	rk.fts = d.newFTSReader(ctx, tx, structure)
	rk.sizes = tx.StmtContext(ctx, d.rStmts[qDocSizes])
	var rare, common []int
	for i := range phrases {
		if i == 0 || rng.IntN(2) == 0 {
			rare = append(rare, i)
		} else {
			common = append(common, i)
		}
	}
	for _, i := range rare {
		if err := rk.postings(phrases[i], i); err != nil {
			t.Fatal(err)
		}
		// The postings are FTS5's matches of the phrase.
		var want []int64
		rows, err := tx.QueryContext(ctx, `SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?`, phrases[i].node.String())
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id int64
			rows.Scan(&id)
			want = append(want, id)
		}
		rows.Close()
		var got []int64
		for _, doc := range rk.docs {
			if slices.Contains(doc.phrases, i) {
				got = append(got, doc.id)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s: postings of %s: %v; FTS5 matches %v", q, phrases[i].node, got, want)
		}
	}
	var commonMax float64
	for _, i := range common {
		commonMax += maxTerm[i]
	}
	docs := make([]*prunedDoc, 0, len(rk.docs))
	for _, doc := range rk.docs {
		docs = append(docs, doc)
		// A term's instances: FTS5's score of the term alone over this
		// row is Term(instances) when the length is right.
		for k, i := range doc.phrases {
			if f := doc.freq[k]; f > 0 {
				var s float64
				err := tx.QueryRowContext(ctx, `SELECT -bm25(memories_fts) FROM memories_fts WHERE memories_fts MATCH ? AND rowid = ?`, phrases[i].node.String(), doc.id).Scan(&s)
				if err != nil {
					t.Fatal(err)
				}
				if s <= 0 {
					t.Fatalf("%s: row %d has %d instances of %s; FTS5 scores it %g", q, doc.id, f, phrases[i].node, s)
				}
			}
		}
	}
	for _, doc := range docs {
		if _, ok := fts[doc.id]; !ok {
			t.Fatalf("%s: candidate %d does not match", q, doc.id)
		}
		if b := doc.bound(corpus, idf, maxTerm, commonMax); b < fts[doc.id] {
			t.Fatalf("%s: bound of %d without its length %.17g < bm25 %.17g", q, doc.id, b, fts[doc.id])
		}
	}
	if err := rk.lengths(docs, commonMax); err != nil {
		t.Fatal(err)
	}
	for _, doc := range docs {
		var want int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM memories_fts_instance WHERE doc = ?`, doc.id).Scan(&want); err != nil {
			t.Fatal(err)
		}
		if doc.dl != want {
			t.Fatalf("%s: row %d has length %d; the index holds %d tokens of it", q, doc.id, doc.dl, want)
		}
		if doc.upper < fts[doc.id] {
			t.Fatalf("%s: bound of %d %.17g < bm25 %.17g", q, doc.id, doc.upper, fts[doc.id])
		}
		for k, i := range doc.phrases {
			if f := doc.freq[k]; f > 0 {
				// Exactly FTS5's instances: Term with the right count
				// and length is FTS5's score of the term alone (up to
				// the last bit of the idf, from Go's log here).
				var s float64
				tx.QueryRowContext(ctx, `SELECT -bm25(memories_fts) FROM memories_fts WHERE memories_fts MATCH ? AND rowid = ?`, phrases[i].node.String(), doc.id).Scan(&s)
				if got := corpus.Term(f, idf[i], doc.dl); math.Abs(got-s) > 1e-12*s {
					t.Fatalf("%s: row %d, %s: %d instances score %.17g; FTS5 %.17g", q, doc.id, phrases[i].node, f, got, s)
				}
			}
		}
	}
	for id, s := range fts {
		if rk.doc(id) == nil && s >= text.RoundUp(commonMax) {
			t.Fatalf("%s: row %d has no rare phrase and scores %.17g, not below the bound %.17g", q, id, s, text.RoundUp(commonMax))
		}
	}
}

// checkStoredBounds checks the frontiers stored beside the index against
// the index itself: no row is pending; every term of the index has a
// frontier and no other term has one (a forgotten word does not stay);
// and for every row that has a term, the term's frontier has a point with
// at least the row's instances of it and at most its length, so that the
// frontier's bound is at least the row's bm25 term whatever the idf and
// the index's figures (stale-high is allowed: a deleted or changed row's
// point may stay; stale-low is not).
func checkStoredBounds(t *testing.T, d *DB) {
	t.Helper()
	var pending int
	if err := d.r.QueryRow(`SELECT count(*) FROM memories_fts_pending`).Scan(&pending); err != nil {
		t.Fatal(err)
	}
	if pending != 0 {
		t.Fatalf("%d rows pending after writes through memos", pending)
	}
	lengths := map[int64]int{}
	rows, err := d.r.Query(`SELECT id, sz FROM memories_fts_docsize`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		var sz []byte
		if err := rows.Scan(&id, &sz); err != nil {
			t.Fatal(err)
		}
		n, _ := sqliteVarint(sz)
		lengths[id] = int(n)
	}
	rows.Close()
	stored := map[string]text.Frontier{}
	rows, err = d.r.Query(`SELECT term, pts FROM memories_fts_bound`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var term string
		var b []byte
		if err := rows.Scan(&term, &b); err != nil {
			t.Fatal(err)
		}
		f, err := text.DecodeFrontier(b)
		if err != nil || len(f) == 0 {
			t.Fatalf("frontier of %q: %v (%d points)", term, err, len(f))
		}
		stored[term] = f
	}
	rows.Close()
	type key struct {
		term string
		doc  int64
	}
	freq := map[key]int{}
	rows, err = d.r.Query(`SELECT term, doc FROM memories_fts_instance`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var k key
		if err := rows.Scan(&k.term, &k.doc); err != nil {
			t.Fatal(err)
		}
		freq[k]++
	}
	rows.Close()
	indexed := map[string]bool{}
	for k, n := range freq {
		indexed[k.term] = true
		f, ok := stored[k.term]
		if !ok {
			t.Fatalf("term %q of row %d has no frontier", k.term, k.doc)
		}
		if !slices.ContainsFunc(f, func(p text.FrontierPoint) bool { return p.Freq >= n && p.Len <= lengths[k.doc] }) {
			t.Fatalf("frontier of %q %v is below row %d: %d instances in %d tokens", k.term, f, k.doc, n, lengths[k.doc])
		}
	}
	for term := range stored {
		if !indexed[term] {
			t.Fatalf("term %q has a frontier and no row", term)
		}
	}
}

package bolt

import (
	"context"
	"database/sql"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/query"
	"github.com/memos-go/memos/core/text"

	_ "modernc.org/sqlite"
)

// The differential test: random documents and random query trees, every
// operator nested in every other, run against SQLite FTS5 configured like the
// sqlite backend and against this package. Both must match the same ids.
// They must also rank them identically with the same bm25 scores, except for
// queries with phrases of several tokens or NEAR: FTS5 then counts, for bm25,
// phrase instances that depend on the order in which it visited earlier rows
// (see text.Query.Freq), which a backend that scores each document on its own cannot
// reproduce. Those queries are ranked identically in most cases; the test
// reports how many.

// diffWords is a small vocabulary with words that share stems and prefixes,
// so that stemming, prefixes and repeated tokens matter.
var diffWords = []string{
	"run", "runs", "running", "runner", "config", "configured", "configuration", "conference",
	"café", "cafe", "Müller", "alpha", "beta", "gamma", "node", "nodes", "edge", "edges",
	"agreed", "agree", "sky", "skies", "happy", "happiness", "the", "a", "of", "zebra",
}

// diffPrefixes are prefix terms to query with, stemmed or not by FTS5.
var diffPrefixes = []string{"r", "ru", "run", "running", "conf", "config", "configuration", "caf", "no", "nodes", "ed", "agre", "happ", "happy", "sk", "z", "th", "m"}

func randomDoc(r *rand.Rand) string {
	n := 1 + r.IntN(14)
	ws := make([]string, n)
	for i := range ws {
		ws[i] = diffWords[r.IntN(len(diffWords))]
	}
	seps := []string{" ", " ", " ", ", ", "-", ". ", " — "}
	var b strings.Builder
	for i, w := range ws {
		if i > 0 {
			b.WriteString(seps[r.IntN(len(seps))])
		}
		b.WriteString(w)
	}
	return b.String()
}

func randomWord(r *rand.Rand) string {
	return strings.ToLower(text.Tokenize(diffWords[r.IntN(len(diffWords))])[0])
}

func randomGroup(r *rand.Rand) query.Node {
	switch r.IntN(4) {
	case 0:
		return &query.Term{Text: diffPrefixes[r.IntN(len(diffPrefixes))], Prefix: true}
	case 1:
		n := 2 + r.IntN(2)
		ts := make([]string, n)
		for i := range ts {
			ts[i] = randomWord(r)
		}
		return &query.Phrase{Terms: ts}
	}
	return &query.Term{Text: randomWord(r)}
}

func randomQuery(r *rand.Rand, depth int) query.Node {
	if depth <= 0 || r.IntN(3) == 0 {
		if r.IntN(5) == 0 {
			n := 2 + r.IntN(2)
			gs := make([]query.Node, n)
			for i := range gs {
				gs[i] = randomGroup(r)
			}
			return &query.Near{Groups: gs, Distance: r.IntN(5)}
		}
		return randomGroup(r)
	}
	kids := func() []query.Node {
		ks := make([]query.Node, 2+r.IntN(2))
		for i := range ks {
			ks[i] = randomQuery(r, depth-1)
		}
		return ks
	}
	switch r.IntN(3) {
	case 0:
		return &query.And{Children: kids()}
	case 1:
		return &query.Or{Children: kids()}
	}
	return &query.Not{Positive: randomQuery(r, depth-1), Negative: randomQuery(r, depth-1)}
}

func TestKeywordMatchesFTS5(t *testing.T) {
	sq := openFTS5(t)
	d := openTestDB(t)
	r := rand.New(rand.NewPCG(7, 11))

	const ndocs = 160
	docs := make([]string, ndocs)
	for i := range docs {
		docs[i] = randomDoc(r)
	}
	// A few documents repeat words, to exercise repeated phrase tokens.
	docs[0], docs[1], docs[2] = "alpha alpha alpha beta", "run run running runner runs", "the the the"
	err := d.Update(context.Background(), func(tx driver.Tx) error {
		for _, c := range docs {
			if err := tx.Insert(testMemory(c)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range docs {
		if _, err := sq.Exec(`INSERT INTO docs (rowid, content) VALUES (?, ?)`, i+1, c); err != nil {
			t.Fatal(err)
		}
	}

	queries := []query.Node{
		&query.Term{Text: "running"},
		&query.Term{Text: "running", Prefix: true},
		&query.Term{Text: "configuration", Prefix: true},
		&query.Term{Text: "happy", Prefix: true},
		&query.Term{Text: "cafe"},
		&query.Term{Text: "muller"},
		&query.Phrase{Terms: []string{"alpha", "alpha"}},
		&query.Phrase{Terms: []string{"the", "the"}},
		&query.Near{Groups: []query.Node{&query.Term{Text: "alpha"}, &query.Term{Text: "beta"}}, Distance: 0},
		&query.Near{Groups: []query.Node{&query.Term{Text: "alpha"}, &query.Term{Text: "alpha"}}, Distance: 1},
		&query.Near{Groups: []query.Node{&query.Term{Text: "run", Prefix: true}, &query.Phrase{Terms: []string{"the", "the"}}, &query.Term{Text: "beta"}}, Distance: 3},
	}
	n := 300
	if raceEnabled {
		n = 80 // bleve is many times slower under the race detector
	}
	for range n {
		queries = append(queries, randomQuery(r, 3))
	}
	mismatches, exact, approx, approxSame := 0, 0, 0, 0
	for _, q := range queries {
		text := q.String()
		rows, err := sq.Query(`SELECT rowid, -bm25(docs) FROM docs WHERE docs MATCH ? ORDER BY bm25(docs), rowid`, text)
		if err != nil {
			t.Fatalf("FTS5 MATCH %s: %v", text, err)
		}
		var wantIDs []int64
		var wantScores []float64
		for rows.Next() {
			var id int64
			var s float64
			if err := rows.Scan(&id, &s); err != nil {
				t.Fatal(err)
			}
			wantIDs = append(wantIDs, id)
			wantScores = append(wantScores, s)
		}
		rows.Close()
		hits, err := d.SearchKeyword(context.Background(), q, driver.Filter{}, 1000)
		if err != nil {
			t.Fatalf("SearchKeyword(%s): %v", text, err)
		}
		gotIDs := make([]int64, len(hits))
		for i, h := range hits {
			gotIDs[i] = h.ID
		}
		if !slices.Equal(sortedCopy(gotIDs), sortedCopy(wantIDs)) {
			mismatches++
			t.Errorf("%s: matched %v, FTS5 matched %v", text, gotIDs, wantIDs)
			continue
		}
		same := true
		for i, h := range hits {
			if h.ID != wantIDs[i] || math.Abs(h.Score-wantScores[i]) > 1e-9*math.Max(1, math.Abs(wantScores[i])) {
				same = false
				break
			}
		}
		switch {
		case !hasNomatch(q):
			exact++
			if !same {
				mismatches++
				t.Errorf("%s: ranked %v, FTS5 ranked %v (scores %v, FTS5 %v)", text, gotIDs, wantIDs, scoresOf(hits), wantScores)
			}
		case same:
			approx++
			approxSame++
		default:
			approx++
		}
		if mismatches > 15 {
			t.Fatal("too many mismatches")
		}
	}
	t.Logf("%d queries of terms and prefixes ranked exactly like FTS5; %d of %d queries with phrases or NEAR too", exact, approxSame, approx)
	if exact < n/10 || approxSame*10 < approx*8 {
		t.Errorf("ranked %d/%d queries with phrases or NEAR like FTS5, want at least 80%%; %d term-only queries", approxSame, approx, exact)
	}
}

// hasNomatch reports whether q has a phrase of several tokens or a NEAR,
// which FTS5 can visit on a row without matching it there.
func hasNomatch(q query.Node) bool {
	switch q := q.(type) {
	case *query.Phrase:
		return len(q.Terms) > 1
	case *query.Near:
		return true
	case *query.And:
		return slices.ContainsFunc(q.Children, hasNomatch)
	case *query.Or:
		return slices.ContainsFunc(q.Children, hasNomatch)
	case *query.Not:
		return hasNomatch(q.Positive) || hasNomatch(q.Negative)
	}
	return false
}

func sortedCopy(ids []int64) []int64 {
	s := slices.Clone(ids)
	slices.Sort(s)
	return s
}

func scoresOf(hits []driver.Hit) []float64 {
	out := make([]float64, len(hits))
	for i, h := range hits {
		out[i] = h.Score
	}
	return out
}

// openFTS5 opens an in-memory SQLite database with the FTS5 table the sqlite
// backend uses (and its vocabulary), the reference bolt is checked against.
func openFTS5(t testing.TB) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file::memory:")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	for _, s := range []string{
		`CREATE VIRTUAL TABLE docs USING fts5 (content, tokenize = 'porter unicode61 remove_diacritics 2')`,
		`CREATE VIRTUAL TABLE vocab USING fts5vocab (docs, 'instance')`,
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	return db
}

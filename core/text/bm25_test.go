package text_test

import (
	"database/sql"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/memos-go/memos/core/query"
	"github.com/memos-go/memos/core/text"
)

// scoreWords share stems and prefixes; the last two occur in no document,
// so that NOTs whose positive side matches nothing are common.
var scoreWords = []string{"apple", "apples", "applied", "delta", "deltas", "echo", "echoes", "golf", "hotel", "hotels", "india", "zzz", "qqq"}

func scoreQuery(r *rand.Rand, depth int) query.Node {
	if depth == 0 || r.IntN(3) == 0 {
		w := text.Tokenize(scoreWords[r.IntN(len(scoreWords))])[0]
		if r.IntN(6) == 0 {
			return &query.Term{Text: w[:1+r.IntN(len(w))], Prefix: true}
		}
		return &query.Term{Text: w}
	}
	kids := []query.Node{scoreQuery(r, depth-1), scoreQuery(r, depth-1)}
	switch r.IntN(3) {
	case 0:
		return &query.And{Children: kids}
	case 1:
		return &query.Or{Children: kids}
	}
	return &query.Not{Positive: kids[0], Negative: kids[1]}
}

type scored struct {
	id    int64
	score float64
}

// search evaluates q over docs (ids 1..n) the way a backend that holds the
// documents' text does: Freq, plus the stranded instances of a NOT, scored
// with the corpus' bm25.
func search(t *testing.T, q *text.Query, docs []*text.Doc) (out []scored, stranded text.Stranded) {
	t.Helper()
	var corpus text.Corpus
	for _, d := range docs {
		corpus.Docs++
		corpus.Tokens += uint64(d.Len())
	}
	idf := make([]float64, len(q.Phrases()))
	for i, p := range q.Phrases() {
		var hits uint64
		for _, d := range docs {
			if d.Contains(p) {
				hits++
			}
		}
		idf[i] = corpus.IDF(hits)
	}
	stranded, err := q.Stranded(func(e text.Expr, from int64) (int64, *text.Doc, bool, error) {
		for i := max(from, 1); i <= int64(len(docs)); i++ {
			if q.Positioned(e, docs[i-1]) {
				return i, docs[i-1], true, nil
			}
		}
		return 0, nil, false, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range docs {
		ok, freq := q.Freq(d)
		if !ok {
			continue
		}
		stranded.Add(int64(i+1), freq)
		out = append(out, scored{int64(i + 1), corpus.Score(freq, idf, d.Len())})
	}
	slices.SortStableFunc(out, func(a, b scored) int {
		if a.score != b.score {
			if a.score > b.score {
				return -1
			}
			return 1
		}
		return int(a.id - b.id)
	})
	return out, stranded
}

// TestScoresMatchFTS5 checks the package's whole contract for a backend that
// has the documents' text (as the PostgreSQL backend will): matching and
// bm25 scores, NOTs included, against SQLite FTS5 on random documents and
// random queries of terms and prefixes.
func TestScoresMatchFTS5(t *testing.T) {
	db, err := sql.Open("sqlite", "file::memory:")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	defer db.Close()
	if _, err := db.Exec(`CREATE VIRTUAL TABLE docs USING fts5 (content, tokenize = 'porter unicode61 remove_diacritics 2')`); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(4, 2))
	docs := make([]*text.Doc, 50)
	for i := range docs {
		ws := make([]string, 1+r.IntN(8))
		for j := range ws {
			ws[j] = scoreWords[r.IntN(len(scoreWords)-2)]
		}
		content := strings.Join(ws, " ")
		if _, err := db.Exec(`INSERT INTO docs (rowid, content) VALUES (?, ?)`, i+1, content); err != nil {
			t.Fatal(err)
		}
		docs[i] = text.NewDoc(content)
	}
	queries := []query.Node{
		// the case of issue 10: "delta" under a NOT that matches nothing
		// still counts on the first document that has it
		&query.Or{Children: []query.Node{&query.Term{Text: "apple"}, &query.Not{Positive: &query.Term{Text: "zzz"}, Negative: &query.Term{Text: "delta"}}}},
	}
	for range 400 {
		queries = append(queries, scoreQuery(r, 3))
	}
	nstranded := 0
	for _, n := range queries {
		q, err := query.Compile(n)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := db.Query(`SELECT rowid, -bm25(docs) FROM docs WHERE docs MATCH ? ORDER BY bm25(docs), rowid`, n.String())
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		var want []scored
		for rows.Next() {
			var s scored
			if err := rows.Scan(&s.id, &s.score); err != nil {
				t.Fatal(err)
			}
			want = append(want, s)
		}
		rows.Close()
		got, stranded := search(t, q, docs)
		if stranded != nil {
			nstranded++
		}
		same := len(got) == len(want)
		for i := 0; same && i < len(got); i++ {
			same = got[i].id == want[i].id && math.Abs(got[i].score-want[i].score) <= 1e-9*math.Max(1, math.Abs(want[i].score))
		}
		if !same {
			t.Errorf("%s: got %v, FTS5 %v", n, got, want)
		}
	}
	if nstranded < 5 {
		t.Errorf("only %d queries leave stranded instances; the test tests too little", nstranded)
	}
}

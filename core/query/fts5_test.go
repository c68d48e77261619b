package query

import (
	"database/sql"
	"slices"
	"strings"
	"sync"
	"testing"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// ftsDocs is the corpus of the FTS5 tests; a document's rowid is its index
// plus one. The first 15 are every non-empty subset of four words (bit i of
// the rowid selects word i), so that any two different boolean readings of
// a query over those words match different rowids.
var ftsDocs = func() []string {
	words := []string{"alpha", "bravo", "charlie", "delta"}
	var docs []string
	for m := 1; m < 16; m++ {
		var ws []string
		for i, w := range words {
			if m&(1<<i) != 0 {
				ws = append(ws, w)
			}
		}
		docs = append(docs, strings.Join(ws, " "))
	}
	return append(docs,
		"Alice prefers open-source tools and open standards",      // 16
		"The source is open on Tuesdays",                          // 17
		"Café au lait with Zoë",                                   // 18
		"configure the config file; configuration is hard",        // 19
		"send an e-mail to Bob about v2.1",                        // 20
		"email and mail, version 2 and 1",                         // 21
		"What does Alice like? Alice likes jazz and hiking",       // 22
		"one two three four five six seven eight nine ten eleven", // 23
		"Straße naïve résumé near the NEAR node",                  // 24
		`she said "and" and "or" in ~/.config nodes: here`,        // 25
	)
}()

var (
	sharedFTSOnce sync.Once
	sharedFTS     *sql.DB
	sharedFTSErr  error
)

// ftsDB returns an in-memory FTS5 table over ftsDocs with the tokenizer the
// sqlite backend uses, shared by every test and fuzz call in the process.
func ftsDB(tb testing.TB) *sql.DB {
	tb.Helper()
	sharedFTSOnce.Do(func() {
		db, err := sql.Open("sqlite", ":memory:")
		if err != nil {
			sharedFTSErr = err
			return
		}
		db.SetMaxOpenConns(1) // one connection: one in-memory database
		if _, err := db.Exec(`CREATE VIRTUAL TABLE docs USING fts5(content, tokenize='porter unicode61 remove_diacritics 2')`); err != nil {
			sharedFTSErr = err
			return
		}
		for i, d := range ftsDocs {
			if _, err := db.Exec(`INSERT INTO docs(rowid, content) VALUES(?, ?)`, i+1, d); err != nil {
				sharedFTSErr = err
				return
			}
		}
		sharedFTS = db
	})
	if sharedFTSErr != nil {
		tb.Fatalf("fts5 test database: %v", sharedFTSErr)
	}
	return sharedFTS
}

// ftsMatch returns the rowids FTS5 matches for the MATCH expression q.
func ftsMatch(db *sql.DB, q string) ([]int64, error) {
	rows, err := db.Query(`SELECT rowid FROM docs WHERE docs MATCH ? ORDER BY rowid`, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	ids := []int64{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// TestDifferentialFTS5 runs each query through FTS5 directly and through
// Parse and String, and requires the same matches. It pins the precedence
// (implicit AND > NOT > AND > OR, NOT left-associative) to FTS5's own.
func TestDifferentialFTS5(t *testing.T) {
	db := ftsDB(t)
	tests := []struct {
		q   string
		fts string // what FTS5 is given, when it cannot take q itself
	}{
		// precedence and associativity
		{q: "alpha OR bravo AND charlie"},
		{q: "alpha AND bravo OR charlie"},
		{q: "alpha NOT bravo AND charlie"},
		{q: "alpha AND bravo NOT charlie"},
		{q: "alpha OR bravo NOT charlie"},
		{q: "alpha NOT bravo OR charlie"},
		{q: "alpha NOT bravo charlie"},
		{q: "alpha bravo NOT charlie"},
		{q: "alpha OR bravo charlie"},
		{q: "alpha bravo OR charlie"},
		{q: "alpha NOT bravo NOT charlie"},
		{q: "alpha NOT (bravo NOT charlie)"},
		{q: "alpha AND bravo charlie OR delta"},
		{q: "alpha NOT bravo AND charlie delta"},
		{q: "alpha OR bravo NOT charlie delta AND alpha OR delta"},
		{q: "(alpha OR bravo) AND (charlie OR delta) NOT bravo"},
		{q: "alpha OR bravo OR charlie NOT delta"},
		{q: "((alpha)) AND ((bravo OR charlie))"},
		{q: "alpha NEAR(bravo charlie) OR delta"},
		{q: "alpha NOT NEAR(bravo charlie)"},
		// words, keywords and quoting
		{q: "jazz and hiking"},
		{q: `"and" OR "or"`},
		{q: "NEAR"},
		{q: "near node"},
		{q: `"alpha""bravo"`},
		{q: `"alpha"bravo`},
		{q: `alpha NOT"bravo"`},
		{q: "alpha AND(bravo)"},
		// phrases, punctuation, prefixes
		{q: `"open source"`},
		{q: `open-source`, fts: `"open source"`},
		{q: `"open-source"`},
		{q: `open source`},
		{q: `e-mail`, fts: `"e mail"`},
		{q: `v2.1`, fts: `"v2 1"`},
		{q: `nodes:`, fts: `nodes`},
		{q: `~/.config`, fts: `config`},
		{q: `conf*`},
		{q: `"conf"*`},
		{q: `conf *`},
		{q: `configur*`},
		{q: `alph*bravo`},
		// NEAR
		{q: `NEAR(open source)`},
		{q: `NEAR(source open, 2)`},
		{q: `NEAR(source open, 1)`},
		{q: `NEAR(one two, 0)`},
		{q: `NEAR(two one, 0)`},
		{q: `NEAR(one three, 0) OR alpha`},
		{q: `NEAR(one three, 1)`},
		{q: `NEAR(one "three four", 1)`},
		{q: `NEAR(thr* one, 1)`},
		// With three or more groups FTS5 counts every token between the end
		// of the first and the start of the last group, the middle group's
		// included: here 5 (two three four five six), not 2 per gap.
		{q: `NEAR(one four seven, 5) OR alpha`},
		{q: `NEAR(one four seven, 4) OR alpha`},
		{q: `NEAR(seven one four, 5) OR alpha`},
		{q: `NEAR(one "four five" seven, 5) OR alpha`},
		{q: `NEAR (one ten)`},
		{q: `NEAR(one eleven)`},
		{q: `NEAR(one)`},
		// Unicode
		{q: `Café`},
		{q: `CAFE`},
		{q: `zoe OR straße`},
		{q: `naive résumé`},
	}
	for _, tc := range tests {
		fts := tc.fts
		if fts == "" {
			fts = tc.q
		}
		want, err := ftsMatch(db, fts)
		if err != nil {
			t.Errorf("FTS5 rejects %q: %v", fts, err)
			continue
		}
		n, err := Parse(tc.q)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.q, err)
			continue
		}
		got, err := ftsMatch(db, n.String())
		if err != nil {
			t.Errorf("FTS5 rejects String() %s of %q: %v", n, tc.q, err)
			continue
		}
		if !slices.Equal(got, want) {
			t.Errorf("%q: FTS5 %q matches %v; Parse gives %s, which matches %v", tc.q, fts, want, n, got)
		}
		if len(want) == 0 {
			t.Errorf("%q matches nothing; the test case cannot tell readings apart", tc.q)
		}
	}
}

// TestRejectedLikeFTS5 checks syntax errors FTS5 also reports.
func TestRejectedLikeFTS5(t *testing.T) {
	db := ftsDB(t)
	for _, q := range []string{
		"NOT alpha", "alpha AND", "OR alpha", "alpha OR OR bravo", "(alpha", "alpha)",
		`"alpha`, "()", "NEAR()", "NEAR(alpha bravo,)", "NEAR(alpha bravo, x)",
		"NEAR(alpha AND bravo)", "NEAR(alpha (bravo))", "alpha **",
	} {
		if _, err := ftsMatch(db, q); err == nil {
			t.Errorf("FTS5 accepts %q; the case is wrong", q)
		}
		if n, err := Parse(q); err == nil {
			t.Errorf("Parse(%q) = %s, want an error as FTS5 gives", q, n)
		}
	}
}

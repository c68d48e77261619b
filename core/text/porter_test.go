package text

import (
	"database/sql"
	"math/rand/v2"
	"strings"
	"testing"

	_ "modernc.org/sqlite"
)

// openFTS5 opens an in-memory SQLite database with an FTS5 table configured
// like the sqlite backend's (tokenize = 'porter unicode61 remove_diacritics 2')
// and an fts5vocab table over it that lists every token instance.
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

// vocabulary returns a deterministic list of words that exercises every rule
// of the stemmer: English-like stems combined with every suffix the rules
// know, plus words with non-ASCII letters and odd lengths.
func vocabulary(n int) []string {
	r := rand.New(rand.NewPCG(1, 2))
	suffixes := []string{"", "s", "es", "ies", "sses", "ss", "ed", "eed", "ing", "ly", "y",
		"at", "bl", "iz", "ated", "bled", "izing", "ational", "tional", "enci", "anci", "izer",
		"logi", "bli", "alli", "entli", "eli", "ousli", "ization", "ation", "ator", "alism",
		"iveness", "fulness", "ousness", "aliti", "iviti", "biliti", "ical", "ness", "icate",
		"iciti", "ful", "ative", "alize", "al", "ance", "ence", "er", "ic", "able", "ible", "ant",
		"ement", "ment", "ent", "ion", "sion", "tion", "ou", "ism", "ate", "iti", "ous", "ive",
		"ize", "e", "le", "ll", "ller", "ying", "yed", "ied"}
	letters := "bcdfghjklmnprstvwxyzaeiouyaeio"
	exotic := []string{"ß", "ø", "æ", "ł", "ð", "þ", "日", "é", "ü", "ñ"}
	words := []string{
		"caresses", "ponies", "ties", "caress", "cats", "feed", "agreed", "plastered", "bled",
		"motoring", "sing", "conflated", "troubled", "sized", "hopping", "tanned", "falling",
		"hissing", "fizzed", "failing", "filing", "happy", "sky", "relational", "conditional",
		"rational", "valenci", "hesitanci", "digitizer", "conformabli", "radicalli", "differentli",
		"vileli", "analogousli", "vietnamization", "predication", "operator", "feudalism",
		"decisiveness", "hopefulness", "callousness", "formaliti", "sensitiviti", "sensibiliti",
		"triplicate", "formative", "formalize", "electriciti", "electrical", "hopeful", "goodness",
		"revival", "allowance", "inference", "airliner", "gyroscopic", "adjustable", "defensible",
		"irritant", "replacement", "adjustment", "dependent", "adoption", "homologou", "communism",
		"activate", "angulariti", "homologous", "effective", "bowdlerize", "probate", "rate",
		"cease", "controll", "roll", "generalizations", "oscillators", "running", "runs", "run",
		"nodes", "edges", "configuration", "configured", "conference", "skies", "dying", "lying",
		"agree", "news", "is", "as", "us", "yes", "ayes", "eyed", "yield", "syzygy", "rhythm",
	}
	for len(words) < n {
		var b strings.Builder
		for range 1 + r.IntN(7) {
			if r.IntN(12) == 0 {
				b.WriteString(exotic[r.IntN(len(exotic))])
			} else {
				b.WriteByte(letters[r.IntN(len(letters))])
			}
		}
		b.WriteString(suffixes[r.IntN(len(suffixes))])
		if r.IntN(3) == 0 {
			b.WriteString(suffixes[r.IntN(len(suffixes))])
		}
		words = append(words, b.String())
	}
	return words
}

// TestStemMatchesFTS5 compares stem with the stems SQLite's FTS5 porter
// tokenizer stores for a large generated vocabulary.
func TestStemMatchesFTS5(t *testing.T) {
	db := openFTS5(t)
	words := vocabulary(30000)
	const perDoc = 500
	var docs [][]string
	for i := 0; i < len(words); i += perDoc {
		doc := words[i:min(i+perDoc, len(words))]
		docs = append(docs, Tokenize(strings.Join(doc, " ")))
		if _, err := db.Exec(`INSERT INTO docs (rowid, content) VALUES (?, ?)`, len(docs), strings.Join(doc, " ")); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := db.Query(`SELECT term, doc, offset FROM vocab`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	checked, bad := 0, 0
	for rows.Next() {
		var term string
		var doc, off int
		if err := rows.Scan(&term, &doc, &off); err != nil {
			t.Fatal(err)
		}
		toks := docs[doc-1]
		if off >= len(toks) {
			t.Fatalf("doc %d: FTS5 has token %d, Tokenize only %d", doc, off, len(toks))
		}
		checked++
		if got := Stem(toks[off]); got != term {
			bad++
			if bad <= 20 {
				t.Errorf("Stem(%q) = %q, FTS5 stores %q", toks[off], got, term)
			}
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if checked < len(words) {
		t.Errorf("checked %d tokens, want at least %d", checked, len(words))
	}
	if bad > 0 {
		t.Errorf("%d of %d stems differ from FTS5", bad, checked)
	}
}

// TestMayStemTo checks, on the stemmer's test vocabulary, that every token
// may stem to its stem, and that it is selective.
func TestMayStemTo(t *testing.T) {
	words := vocabulary(30000)
	others := 0
	for i, w := range words {
		w = strings.ToLower(w)
		st := Stem(w)
		if !MayStemTo([]byte(w), st) {
			t.Errorf("MayStemTo(%q, %q) = false; Stem(%q) = %q", w, st, w, st)
		}
		if o := Stem(strings.ToLower(words[(i+1)%len(words)])); o != st && MayStemTo([]byte(w), o) {
			others++
		}
	}
	if others > len(words)/10 {
		t.Errorf("MayStemTo admitted %d of %d other words' stems; it should rule most out", others, len(words))
	}
	for _, c := range []struct {
		tok, stem string
		want      bool
	}{
		{"sensibility", "sensibl", true}, {"possibly", "possibl", true}, {"ies", "i", true},
		{"say", "sai", true}, {"alice", "alic", true}, {"bob", "alic", false}, {"al", "alic", false},
		{"apple", "alic", false}, {"alpine", "alic", true},
	} {
		if got := MayStemTo([]byte(c.tok), c.stem); got != c.want {
			t.Errorf("MayStemTo(%q, %q) = %v, want %v", c.tok, c.stem, got, c.want)
		}
	}
}

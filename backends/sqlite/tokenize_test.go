package sqlite

import (
	"database/sql"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/memos-go/memos/core/longtest"
	"github.com/memos-go/memos/core/text"
)

// fts5Tokens returns the tokens FTS5's unicode61 tokenizer (remove_diacritics
// 2, as the store's index without porter) makes of each of texts, by row.
func fts5Tokens(t *testing.T, texts []string) [][]string {
	t.Helper()
	db, err := sql.Open("sqlite", "file::memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, s := range []string{
		`CREATE VIRTUAL TABLE t USING fts5 (x, tokenize = 'unicode61 remove_diacritics 2')`,
		`CREATE VIRTUAL TABLE v USING fts5vocab (t, 'instance')`,
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range texts {
		if _, err := tx.Exec(`INSERT INTO t (rowid, x) VALUES (?, ?)`, i+1, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query(`SELECT doc, term FROM v ORDER BY doc, offset`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := make([][]string, len(texts))
	for rows.Next() {
		var doc int
		var term string
		if err := rows.Scan(&doc, &term); err != nil {
			t.Fatal(err)
		}
		out[doc-1] = append(out[doc-1], term)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestTokenizeIsFTS5s checks core/text's tokenizer, which every backend's
// queries and bolt's and postgres's indexes use, against FTS5's on every
// code point (every 17th under the race detector) between two letters,
// and on random text mixing scripts, marks, emoji and punctuation.
func TestTokenizeIsFTS5s(t *testing.T) {
	// Every code point in the long tests (every 17th under -race, where
	// FTS5 runs some 30 times slower); a spread sample in the quick ones.
	step := longtest.Pick(rune(61), rune(1))
	if raceEnabled {
		step = longtest.Pick(rune(257), rune(17))
	}
	var texts []string
	for r := rune(0x80); r <= utf8.MaxRune; r += step {
		if utf8.ValidRune(r) {
			texts = append(texts, "q"+string(r)+"z")
		}
	}
	rng := rand.New(rand.NewPCG(7, 16))
	pools := []string{"abcXYZ019 ", " .,-'!", "서울한국음식", "がぎぐパピ学校", "ёЁйЙщ", "שָׁלוֹם", "हिन्दी", "ไทย", "Café naïve Ǡǡ µſ", "🤔🥳🍕👍🏽", "\u0301\u0308\u200d\ufe0f"}
	for range longtest.Pick(600, 3000) {
		var b strings.Builder
		for range 1 + rng.IntN(20) {
			switch p := []rune(pools[rng.IntN(len(pools))]); rng.IntN(8) {
			case 0:
				if r := rune(0x80 + rng.IntN(0x30000)); utf8.ValidRune(r) {
					b.WriteRune(r)
				}
			default:
				b.WriteRune(p[rng.IntN(len(p))])
			}
		}
		texts = append(texts, b.String())
	}
	want := fts5Tokens(t, texts)
	bad := 0
	for i, s := range texts {
		if got := text.Tokenize(s); !slices.Equal(got, want[i]) && !(len(got) == 0 && len(want[i]) == 0) {
			if bad++; bad <= 10 {
				t.Errorf("Tokenize(%+q) = %q, FTS5 %q", s, got, want[i])
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d texts tokenized unlike FTS5", bad, len(texts))
	}
}

package query

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Tokenize splits s into lower-case tokens the way memos' keyword indexes do
// (SQLite's unicode61 tokenizer with remove_diacritics 2): a token is a run of
// Unicode letters, digits and private-use characters; everything else
// separates tokens; diacritics are removed ("Café" → "cafe").
func Tokenize(s string) []string {
	var toks []string
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 {
			toks = append(toks, b.String())
			b.Reset()
		}
	}
	for _, r := range norm.NFD.String(s) {
		switch {
		case unicode.Is(unicode.Mn, r):
			// a combining mark: part of the previous letter, dropped
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsNumber(r) || unicode.Is(unicode.Co, r):
			b.WriteRune(unicode.ToLower(r))
		default:
			flush()
		}
	}
	flush()
	return toks
}

package hash

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/memos-go/memos/core/text"
)

// appendTokens appends the tokens of s as the v1 feature scheme defines
// them, which must not change while the version stands (see Versions): for
// ASCII, text.AppendTokens's (runs of letters and digits, lower-cased); for
// other text, runs of Go's Unicode letters, digits and private-use
// characters after NFD decomposition, combining marks dropped, lower-cased.
// That was text.Tokenize's definition when v1 was made; text.Tokenize has
// since followed FTS5's own character table, which differs outside ASCII
// (Hangul syllables, kana with dakuten, Cyrillic ё, Hebrew and Indic marks),
// so the keyword indexes match what FTS5 indexes while vectors of hash-v1
// stay what they were.
func appendTokens(dst []string, s string) []string {
	if !text.IsASCII(s) {
		return appendTokensV1(dst, s)
	}
	return text.AppendTokens(dst, s)
}

func appendTokensV1(dst []string, s string) []string {
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 {
			dst = append(dst, b.String())
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
	return dst
}

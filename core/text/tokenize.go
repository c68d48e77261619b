package text

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Tokenize splits s into lower-case tokens the way memos' keyword indexes do
// (SQLite's unicode61 tokenizer with remove_diacritics 2): a token is a run of
// Unicode letters, digits and private-use characters; everything else
// separates tokens; diacritics are removed ("Café" → "cafe").
func Tokenize(s string) []string { return AppendTokens(nil, s) }

// AppendTokens appends the tokens of s, as Tokenize makes them, to dst and
// returns the extended slice. Pure ASCII text, the common case, takes a fast
// path that makes one lower-case copy and slices the tokens out of it: for
// ASCII, letters and digits are [A-Za-z0-9], normalisation changes nothing
// and there are no combining marks.
func AppendTokens(dst []string, s string) []string {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return appendUnicode(dst, s)
		}
	}
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + ('a' - 'A')
		}
	}
	low := string(b)
	start := -1
	for i := 0; i <= len(low); i++ {
		if i < len(low) && isAlnum(low[i]) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			dst = append(dst, low[start:i])
			start = -1
		}
	}
	return dst
}

func isAlnum(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' }

func appendUnicode(dst []string, s string) []string {
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

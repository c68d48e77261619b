package text

import (
	"sort"
	"strings"
	"unicode/utf8"
)

// Tokenize splits s into lower-case tokens exactly as SQLite FTS5's
// unicode61 tokenizer with remove_diacritics 2 does (the sqlite backend's
// index, and so every backend's): a token is a run of token characters,
// each folded to lower case without diacritics ("Café" → "cafe"); everything
// else separates tokens. Which characters are token characters, and what
// they fold to, is FTS5's per-character table (see Fold), not Go's Unicode
// categories: they differ for a third of the code points (Hangul syllables
// stay whole, が keeps its dakuten, Hebrew and Indic vowel signs separate).
func Tokenize(s string) []string { return AppendTokens(nil, s) }

// AppendTokens appends the tokens of s, as Tokenize makes them, to dst and
// returns the extended slice. Pure ASCII text, the common case, takes a fast
// path that makes one lower-case copy and slices the tokens out of it: for
// ASCII, letters and digits are [A-Za-z0-9], normalisation changes nothing
// and there are no combining marks.
func AppendTokens(dst []string, s string) []string {
	if !IsASCII(s) {
		return appendUnicode(dst, s)
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

// IsASCII reports whether s is ASCII, whose tokens are the runs of ASCII
// letters and digits, lower-cased.
func IsASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
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
	for _, r := range s {
		f, token := Fold(r)
		switch {
		case !token:
			flush()
		case f >= 0:
			b.WriteRune(f)
		}
	}
	flush()
	return dst
}

// Fold says what FTS5's unicode61 tokenizer (remove_diacritics 2) makes of
// r: whether r is part of a token, and if so the character it folds to (to
// lower case, without diacritics), or -1 when it folds to nothing (a
// combining diacritic: it still joins the characters around it). It treats
// each character on its own, by the Unicode tables of the SQLite that
// tokentable.go was generated from, not Go's: a code point those tables
// do not assign (a newer emoji, say) is a token character. An invalid
// UTF-8 byte, decoded as utf8.RuneError, separates tokens.
func Fold(r rune) (rune, bool) {
	switch {
	case r < 0x80:
		switch {
		case 'a' <= r && r <= 'z', '0' <= r && r <= '9':
			return r, true
		case 'A' <= r && r <= 'Z':
			return r + ('a' - 'A'), true
		}
		return r, false
	case r > utf8.MaxRune:
		return r, false
	}
	i := sort.Search(len(tokenTable), func(i int) bool { return tokenTable[i].hi >= r })
	if i == len(tokenTable) || tokenTable[i].lo > r {
		return r, false // a surrogate
	}
	switch e := tokenTable[i]; e.kind {
	case kindToken:
		return r + e.delta, true
	case kindDrop:
		return -1, true
	}
	return r, false
}

// tokenRange is an entry of tokenTable: the code points lo through hi,
// which FTS5 treats alike.
type tokenRange struct {
	lo, hi rune
	delta  rune // kindToken: r folds to r + delta
	kind   uint8
}

// The kinds of tokenRange.
const (
	kindSep   = 0 // separates tokens
	kindToken = 1 // a token character, folded to r + delta
	kindDrop  = 2 // a token character that folds to nothing
)

//go:generate go run ./internal/gentokens -o tokentable.go

package postgres

import "unicode/utf8"

// maxLexeme is the longest lexeme a tsvector holds (2 KiB less one byte).
const maxLexeme = 2047

// lexeme cuts a token to the length a tsvector accepts, at a character
// boundary. The index only proposes candidates, so a cut token proposes a
// superset, and the exact match runs on the content.
func lexeme(t string) string {
	if len(t) <= maxLexeme {
		return t
	}
	n := maxLexeme
	for n > 0 && !utf8.RuneStart(t[n]) {
		n--
	}
	return t[:n]
}

package hash

import "github.com/memos-go/memos/core/query"

// tokenize splits s into tokens exactly as query.Tokenize does, appending to
// dst. Pure ASCII text, the common case, takes a fast path that makes one
// lower-case copy and slices tokens out of it: for ASCII, query.Tokenize's
// letters and digits are [A-Za-z0-9], its Unicode normalisation changes
// nothing, and there are no combining marks. Other text goes through
// query.Tokenize itself.
func tokenize(dst []string, s string) []string {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return append(dst, query.Tokenize(s)...)
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

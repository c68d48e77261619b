package hash

import (
	"slices"
	"testing"

	"github.com/memos-go/memos/core/query"
)

var tokenizeCases = []string{
	"", " ", "Alice prefers open-source tools.", "v2.1 (beta) -- ID_42; x=y&z",
	"ALL CAPS and MiXeD", "tabs\tand\nnewlines\r\n", "~!@#$%^&*()_+`-={}|[]\\:\";'<>?,./",
	"Café au lait", "naïve résumé", "東京 2024", "a\x00b\x7fc", "\xff\xfe", "123abc456",
}

// TestTokenizeMatchesQuery checks that the fast path agrees with
// query.Tokenize, which defines the tokens (the vectors depend on it).
func TestTokenizeMatchesQuery(t *testing.T) {
	for _, s := range tokenizeCases {
		if got, want := tokenize(nil, s), query.Tokenize(s); !slices.Equal(got, want) {
			t.Errorf("tokenize(%q) = %q, want %q", s, got, want)
		}
	}
}

func FuzzTokenize(f *testing.F) {
	for _, s := range tokenizeCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := tokenize(nil, s), query.Tokenize(s); !slices.Equal(got, want) {
			t.Fatalf("tokenize(%q) = %q, want %q", s, got, want)
		}
	})
}

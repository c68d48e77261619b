package text

import (
	"slices"
	"testing"
)

var tokenizeCases = []string{
	"", " ", "Alice prefers open-source tools.", "v2.1 (beta) -- ID_42; x=y&z",
	"ALL CAPS and MiXeD", "tabs\tand\nnewlines\r\n", "~!@#$%^&*()_+`-={}|[]\\:\";'<>?,./",
	"Café au lait", "naïve résumé", "東京 2024", "a\x00b\x7fc", "\xff\xfe", "123abc456",
}

// TestASCIIPathMatchesUnicode checks that the ASCII fast path makes the
// tokens the Unicode path makes, which define them (the keyword indexes and
// the hash embedder's vectors depend on them).
func TestASCIIPathMatchesUnicode(t *testing.T) {
	for _, s := range tokenizeCases {
		if got, want := AppendTokens(nil, s), appendUnicode(nil, s); !slices.Equal(got, want) {
			t.Errorf("AppendTokens(%q) = %q, want %q", s, got, want)
		}
	}
	if got := Tokenize("Café Müller, v2.1"); !slices.Equal(got, []string{"cafe", "muller", "v2", "1"}) {
		t.Errorf("Tokenize = %q", got)
	}
	if got := AppendTokens([]string{"x"}, "A b"); !slices.Equal(got, []string{"x", "a", "b"}) {
		t.Errorf("AppendTokens does not append: %q", got)
	}
}

func FuzzTokenize(f *testing.F) {
	for _, s := range tokenizeCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := AppendTokens(nil, s), appendUnicode(nil, s); !slices.Equal(got, want) {
			t.Fatalf("AppendTokens(%q) = %q, want %q", s, got, want)
		}
	})
}

// BenchmarkTokenize measures the tokenizer on ASCII and on other text
// (Korean, Russian, Japanese and accented Latin), per byte.
func BenchmarkTokenize(b *testing.B) {
	for _, c := range []struct{ name, s string }{
		{"ascii", "Alice prefers open-source tools for vector search, and Bob runs the nightly build at midnight."},
		{"unicode", "서울에서 한국 음식을 먹었다. Маша ела ёлку на Новый год. 昨日は学校がありました. Café Müller, naïve résumé."},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.s)))
			var dst []string
			for range b.N {
				dst = AppendTokens(dst[:0], c.s)
			}
		})
	}
}

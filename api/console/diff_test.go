package console

import (
	"strings"
	"testing"
)

// TestDiffWords checks the word diff of the memory page: the kept, removed
// and added runs put together give back both texts, and very long texts
// fall back to removed-then-added.
func TestDiffWords(t *testing.T) {
	long := strings.Repeat("word ", 3000)
	for _, c := range []struct {
		a, b string
		want []segment
	}{
		{"same text", "same text", []segment{{"=", "same text"}}},
		{"", "new text", []segment{{"+", "new text"}}},
		{"old text", "", []segment{{"-", "old text"}}},
		{"Alice prefers open-source tools", "Alice prefers free software tools",
			[]segment{{"=", "Alice prefers "}, {"-", "open-source "}, {"+", "free software "}, {"=", "tools"}}},
		{"a <b> c", "a c", []segment{{"=", "a "}, {"-", "<b> "}, {"=", "c"}}},
		{long, long + "x", []segment{{"-", long}, {"+", long + "x"}}},
	} {
		got := diffWords(c.a, c.b)
		var a, b strings.Builder
		for _, s := range got {
			if s.Op != "+" {
				a.WriteString(s.Text)
			}
			if s.Op != "-" {
				b.WriteString(s.Text)
			}
		}
		if a.String() != c.a || b.String() != c.b {
			t.Errorf("diff of %.30q and %.30q does not rebuild them: %q", c.a, c.b, got)
		}
		if len(got) != len(c.want) {
			t.Errorf("diff of %.30q and %.30q = %q, want %q", c.a, c.b, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("diff of %.30q and %.30q = %q, want %q", c.a, c.b, got, c.want)
				break
			}
		}
	}
}

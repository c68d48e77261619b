package query

import (
	"strings"
	"testing"
)

func TestNatural(t *testing.T) {
	tests := []struct{ in, want string }{
		{"what does alice like", `("alice" OR "like")`},
		{"What does Alice like?", `("alice" OR "like")`},
		{"open-source", `"open source"`},
		{"is alice into open-source tools", `("alice" OR "open source" OR "tools")`},
		{"config*", `"config"*`},
		{"the*", `"the"*`}, // an explicit prefix is kept even on a stop word
		{"NOT x", `"x"`},
		{"alice AND bob OR NEAR(carol dave)", `("alice" OR "bob" OR "carol" OR "dave")`},
		{"(alice) (bob", `("alice" OR "bob")`},
		{"nodes:", `"nodes"`},
		{"~/.config", `"config"`},
		{"Café", `"cafe"`},
		{"café CAFE Cafe", `"cafe"`},
		{`she said "the end" loudly`, `("said" OR "the end" OR "loudly")`},
		{`"the"`, `"the"`}, // quoted: kept
		{`"config"*`, `"config"*`},
		{`"open source"*`, `"open source"`},
		{`unbalanced "quote marks`, `("unbalanced" OR "quote" OR "marks")`},
		{"alice's e-mail", `("alice" OR "e mail")`},
		{"Alice’s dog, Bob's cat", `("alice" OR "dog" OR "bob" OR "cat")`},
		{"it's v2.1", `"v2 1"`},
		{"alice alice ALICE", `"alice"`},
		{"who is it", `("who" OR "is" OR "it")`}, // only stop words: OR them
		{"what is the", `("what" OR "is" OR "the")`},
		{"AND OR", `("and" OR "or")`},
		{"config* config", `("config"* OR "config")`},
		{"2024 plans", `("2024" OR "plans")`},
	}
	for _, tc := range tests {
		n := Natural(tc.in)
		if n == nil {
			t.Errorf("Natural(%q) = nil, want %s", tc.in, tc.want)
			continue
		}
		if got := n.String(); got != tc.want {
			t.Errorf("Natural(%q) = %s, want %s", tc.in, got, tc.want)
		}
		if err := Validate(n); err != nil {
			t.Errorf("Validate(Natural(%q)): %v", tc.in, err)
		}
	}
	for _, in := range []string{"", "   ", "~ - ()", `""`, "*"} {
		if n := Natural(in); n != nil {
			t.Errorf("Natural(%q) = %s, want nil", in, n)
		}
	}
}

func TestNaturalTermLimit(t *testing.T) {
	var words []string
	for i := range 100 {
		words = append(words, "w"+strings.Repeat("x", i))
	}
	n := Natural(strings.Join(words, " "))
	or, ok := n.(*Or)
	if !ok || len(or.Children) != MaxTerms {
		t.Fatalf("Natural of 100 words = %s, want an Or of the first %d", n, MaxTerms)
	}
	if got := or.Children[MaxTerms-1].(*Term).Text; got != words[MaxTerms-1] {
		t.Errorf("last kept term = %q, want %q", got, words[MaxTerms-1])
	}
	// Stop words do not use up the budget of content words.
	n = Natural(strings.Repeat("the is a ", 40) + "alice")
	if got := n.String(); got != `"alice"` {
		t.Errorf("Natural(many stop words + alice) = %s", got)
	}
}

func TestStopWordsAreFunctionWords(t *testing.T) {
	for _, w := range []string{"like", "want", "know", "remember", "name", "never", "no", "favorite", "near", "alice"} {
		if IsStopWord(w) {
			t.Errorf("%q is a stop word; it can be what a query is about", w)
		}
	}
	for _, w := range []string{"what", "does", "the", "a", "is", "and", "or", "not"} {
		if !IsStopWord(w) {
			t.Errorf("%q is not a stop word", w)
		}
	}
}

func BenchmarkNatural(b *testing.B) {
	qs := []string{
		"what does alice like",
		`Which open-source tools did Bob's team pick for the "data pipeline" in 2024, and why?`,
	}
	for b.Loop() {
		for _, q := range qs {
			if Natural(q) == nil {
				b.Fatal("nil")
			}
		}
	}
}

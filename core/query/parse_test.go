package query

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct{ in, want string }{
		// operands
		{"alice", `"alice"`},
		{"Alice", `"alice"`},
		{`"Alice Smith"`, `"alice smith"`},
		{`"alice"`, `"alice"`},
		{`"a""b"`, `"a b"`}, // "" inside quotes is a literal quote, as in FTS5
		{"open-source", `"open source"`},
		{"e-mail", `"e mail"`},
		{"v2.1", `"v2 1"`},
		{"config*", `"config"*`},
		{"config *", `"config"*`},
		{`"config"*`, `"config"*`},
		{"Café", `"cafe"`},
		{"nodes:", `"nodes"`},
		{"~/.config", `"config"`},
		{"nodes:alice", `"nodes alice"`},
		{"-x", `"x"`},
		{"~ alice -", `"alice"`},
		{`"" alice`, `"alice"`},
		{"ünïcödé Straße 東京", `("unicode" AND "straße" AND "東京")`},
		// keywords are upper case only; NEAR needs a "("
		{"alice and bob", `("alice" AND "and" AND "bob")`},
		{"alice or not bob", `("alice" AND "or" AND "not" AND "bob")`},
		{`"AND" "OR" "NOT"`, `("and" AND "or" AND "not")`},
		{"NEAR", `"near"`},
		{"NEAR alice", `("near" AND "alice")`},
		{"near(a b)", `("near" AND "a" AND "b")`},
		// operators
		{"a b", `("a" AND "b")`},
		{"a AND b", `("a" AND "b")`},
		{"a OR b", `("a" OR "b")`},
		{"a NOT b", `("a" NOT "b")`},
		{"a AND b AND c", `("a" AND "b" AND "c")`},
		{"a OR b OR c", `("a" OR "b" OR "c")`},
		{"a AND (b AND c) d", `("a" AND "b" AND "c" AND "d")`},
		{"(a OR b) OR (c OR d)", `("a" OR "b" OR "c" OR "d")`},
		// precedence, tightest first: implicit AND, NOT, AND, OR
		{"a OR b AND c", `("a" OR ("b" AND "c"))`},
		{"a AND b OR c", `(("a" AND "b") OR "c")`},
		{"a NOT b AND c", `(("a" NOT "b") AND "c")`},
		{"a AND b NOT c", `("a" AND ("b" NOT "c"))`},
		{"a OR b NOT c", `("a" OR ("b" NOT "c"))`},
		{"a NOT b OR c", `(("a" NOT "b") OR "c")`},
		{"a NOT b c", `("a" NOT ("b" AND "c"))`},
		{"a b NOT c", `(("a" AND "b") NOT "c")`},
		{"a OR b c", `("a" OR ("b" AND "c"))`},
		{"a NOT b NOT c", `(("a" NOT "b") NOT "c")`},
		{"a NOT (b NOT c)", `("a" NOT ("b" NOT "c"))`},
		{"a OR b c NOT d AND e", `("a" OR ((("b" AND "c") NOT "d") AND "e"))`},
		{"(a OR b) c", `(("a" OR "b") AND "c")`}, // FTS5 rejects this; memos reads implicit AND
		{"a (b OR c)", `("a" AND ("b" OR "c"))`},
		{"((a))", `"a"`},
		// NEAR
		{`NEAR(a "b c", 5)`, `NEAR("a" "b c", 5)`},
		{`NEAR(a b)`, `NEAR("a" "b", 10)`},
		{`NEAR (a b ,0)`, `NEAR("a" "b", 0)`},
		{`NEAR(a b, 007)`, `NEAR("a" "b", 7)`},
		{`NEAR(conf* open-source)`, `NEAR("conf"* "open source", 10)`},
		{`NEAR(a)`, `"a"`},
		{`NEAR(~ a, 3)`, `"a"`},
		{`NEAR(a b) c`, `(NEAR("a" "b", 10) AND "c")`},
		{`x NOT NEAR(a b)`, `("x" NOT NEAR("a" "b", 10))`},
		{`NEAR(a b 5)`, `NEAR("a" "b" "5", 10)`},
		{`a,b`, `"a b"`}, // a comma is punctuation outside NEAR
		// dropped operands
		{"~ AND a", `"a"`},
		{"a OR ~", `"a"`},
		{"a NOT ~", `"a"`},
		{"x OR (~ NOT a)", `"x"`},
		{"x OR NEAR(~ -)", `"x"`},
		{"~* a", `"a"`},
	}
	for _, tc := range tests {
		n, err := Parse(tc.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if got := n.String(); got != tc.want {
			t.Errorf("Parse(%q) = %s, want %s", tc.in, got, tc.want)
		}
		if err := Validate(n); err != nil {
			t.Errorf("Validate(Parse(%q)): %v", tc.in, err)
		}
	}
}

func TestParseAST(t *testing.T) {
	tests := []struct {
		in   string
		want Node
	}{
		{"config*", &Term{Text: "config", Prefix: true}},
		{"open-source", &Phrase{Terms: []string{"open", "source"}}},
		{"a OR b c", &Or{Children: []Node{
			&Term{Text: "a"},
			&And{Children: []Node{&Term{Text: "b"}, &Term{Text: "c"}}},
		}}},
		{"a NOT b NOT c", &Not{
			Positive: &Not{Positive: &Term{Text: "a"}, Negative: &Term{Text: "b"}},
			Negative: &Term{Text: "c"},
		}},
		{"NEAR(a b c)", &Near{Groups: []Node{&Term{Text: "a"}, &Term{Text: "b"}, &Term{Text: "c"}}, Distance: DefaultNearDistance}},
	}
	for _, tc := range tests {
		n, err := Parse(tc.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if !reflect.DeepEqual(n, tc.want) {
			t.Errorf("Parse(%q) = %s, want %s", tc.in, n, tc.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "query: empty query"},
		{" \t\n", "query: empty query"},
		{"~ - ~/", "query: nothing to search for"},
		{`""`, "query: nothing to search for"},
		{"NEAR(~)", "query: nothing to search for"},
		{"~ NOT a", "query: nothing to search for"},
		{`open source "sof`, "query: unbalanced quote at column 13"},
		{`x "a"" b`, "query: unbalanced quote at column 3"},
		{"a (b", "query: unbalanced parenthesis at column 3"},
		{"a (b OR (c)", "query: unbalanced parenthesis at column 3"},
		{"a b)", "query: unbalanced parenthesis at column 4"},
		{")", "query: unbalanced parenthesis at column 1"},
		{"x NEAR(a b", "query: unbalanced parenthesis at column 7"},
		{"x NEAR  (a b, 3", "query: unbalanced parenthesis at column 9"},
		{"()", "query: empty parentheses at column 1"},
		{"a ( )", "query: empty parentheses at column 3"},
		{"NOT x", "query: NOT needs a left operand at column 1"},
		{"AND x", "query: AND needs a left operand at column 1"},
		{"x OR NOT y", "query: NOT needs a left operand at column 6"},
		{"(OR y)", "query: OR needs a left operand at column 2"},
		{"x AND", "query: AND needs a right operand at column 3"},
		{"x OR", "query: OR needs a right operand at column 3"},
		{"x NOT", "query: NOT needs a right operand at column 3"},
		{"(x AND) y", "query: AND needs a right operand at column 4"},
		{"*", "query: * must follow a word at column 1"},
		{"a **", "query: * must follow a word at column 4"},
		{"a OR *b", "query: * must follow a word at column 6"},
		{"(a)*", "query: * must follow a word, not a parenthesis at column 4"},
		{"NEAR(a b)*", "query: * must follow a word, not NEAR(...) at column 10"},
		{"open-source*", `query: prefix * is supported after a single word, not after the phrase "open source" at column 12`},
		{`"a b" *`, `query: prefix * is supported after a single word, not after the phrase "a b" at column 7`},
		{"NEAR(a b, -1)", "query: NEAR distance must be a non-negative integer at column 11"},
		{"NEAR(a b, x)", "query: NEAR distance must be a non-negative integer at column 11"},
		{"NEAR(a b, 1.5)", "query: NEAR distance must be a non-negative integer at column 11"},
		{"NEAR(a b,)", "query: NEAR distance must be a non-negative integer at column 9"},
		{"NEAR(a b, 3 c)", "query: expected ) after the NEAR distance at column 13"},
		{"NEAR(a b, 99999999999)", "query: NEAR distance 99999999999 is too large (the limit is 1000000) at column 11"},
		{"NEAR()", "query: NEAR needs at least one word or phrase at column 1"},
		{"NEAR(, 3)", "query: NEAR needs at least one word or phrase at column 1"},
		{"NEAR(a AND b)", `query: NEAR takes only words and phrases, then an optional ", distance" at column 8`},
		{"NEAR(a (b))", `query: NEAR takes only words and phrases, then an optional ", distance" at column 8`},
		{"NEAR(a NEAR(b))", `query: NEAR takes only words and phrases, then an optional ", distance" at column 8`},
		{"Zoë (", "query: unbalanced parenthesis at column 5"}, // columns count runes, not bytes
		{"a\xffb", "query: invalid UTF-8 at column 2"},
		{strings.Repeat("a ", 2049), "query: query is too long (4098 bytes; the limit is 4096)"},
		{strings.Repeat("w ", 64) + "x", "query: too many terms (the limit is 64) at column 129"},
		{strings.Repeat("w ", 63) + "x-y", "query: too many terms (the limit is 64) at column 127"},
		{deep(21), "query: operators nest 21 deep; the limit is 20, simplify the query"},
	}
	for _, tc := range tests {
		n, err := Parse(tc.in)
		if err == nil {
			t.Errorf("Parse(%q) = %s, want error %q", tc.in, n, tc.want)
			continue
		}
		if err.Error() != tc.want {
			t.Errorf("Parse(%q) error = %q, want %q", tc.in, err, tc.want)
		}
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("Parse(%q) error %T is not a *SyntaxError", tc.in, err)
		}
	}
}

// deep returns a query whose operators nest d deep: a OR (b AND (c OR ...)).
func deep(d int) string {
	s := "z"
	for i := range d {
		op := " OR "
		if i%2 == 1 {
			op = " AND "
		}
		s = "(x" + op + s + ")"
	}
	return s
}

func TestParseDepthLimit(t *testing.T) {
	n, err := Parse(deep(MaxDepth))
	if err != nil {
		t.Fatalf("Parse(deep(%d)): %v", MaxDepth, err)
	}
	if d := depth(n); d != MaxDepth {
		t.Fatalf("depth = %d, want %d", d, MaxDepth)
	}
	// The deepest accepted query, with a NEAR at the bottom, must still fit
	// FTS5's parser stack.
	s := strings.Replace(deep(MaxDepth), "z", "NEAR(one two)", 1)
	n, err = Parse(s)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if _, err := ftsMatch(ftsDB(t), n.String()); err != nil {
		t.Fatalf("FTS5 rejects the deepest query Parse accepts: %v", err)
	}
	// Deep parentheses that add no operators are fine.
	if _, err := Parse(strings.Repeat("(", 500) + "a" + strings.Repeat(")", 500)); err != nil {
		t.Fatalf("deep parentheses: %v", err)
	}
}

func TestParseLimits(t *testing.T) {
	ok := strings.Repeat("w ", 63) + "x"
	if _, err := Parse(ok); err != nil {
		t.Errorf("%d terms: %v", MaxTerms, err)
	}
	long := strings.Repeat(" ", MaxQueryBytes-1) + "x"
	if _, err := Parse(long); err != nil {
		t.Errorf("%d bytes: %v", MaxQueryBytes, err)
	}
}

var benchQueries = []string{
	`alice OR bob`,
	`"open source" AND (config* OR settings) NOT deprecated`,
	`NEAR(alice "machine learning", 5) OR e-mail v2.1 Café`,
}

func BenchmarkParse(b *testing.B) {
	for b.Loop() {
		for _, q := range benchQueries {
			if _, err := Parse(q); err != nil {
				b.Fatal(err)
			}
		}
	}
}

package query

import (
	"errors"
	"reflect"
	"testing"
)

var fuzzSeeds = []string{
	"alice", "a OR b AND c", "a NOT b c", `"open source"*`, "open-source", "config*",
	`NEAR(a "b c", 5)`, "NEAR(a b,)", "NOT x", "(a OR b) c", `"a""b"`, "~/.config nodes:",
	"Café Straße 東京", "a (b", `"abc`, "NEAR", "what does alice like", "a,b NEAR(a,b)",
	"x OR NOT y", "((a)) AND ((b OR c)) NOT d", "a\xffb", "**", `""*`, "AND OR NOT",
	"\u0130stanbul \u212a ǅ ﬁ", "e\u0301te\u0301",
}

// FuzzParse checks that Parse never panics, fails only with a
// *SyntaxError, and that what it accepts is a valid AST whose String
// parses back to the same AST and is accepted by FTS5.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := Parse(s)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse(%q) error %v is a %T, not a *SyntaxError", s, err, err)
			}
			return
		}
		checkRendered(t, s, n)
	})
}

// FuzzNatural checks the same of Natural, which never fails.
func FuzzNatural(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if n := Natural(s); n != nil {
			checkRendered(t, s, n)
		}
	})
}

func checkRendered(t *testing.T, s string, n Node) {
	t.Helper()
	if err := Validate(n); err != nil {
		t.Fatalf("%q gives an invalid AST %s: %v", s, n, err)
	}
	str := n.String()
	back, err := Parse(str)
	if err != nil {
		t.Fatalf("%q renders as %s, which does not parse: %v", s, str, err)
	}
	if !reflect.DeepEqual(back, n) {
		t.Fatalf("%q renders as %s, which parses to %s", s, str, back)
	}
	if _, err := ftsMatch(ftsDB(t), str); err != nil {
		t.Fatalf("%q renders as %s, which FTS5 rejects: %v", s, str, err)
	}
}

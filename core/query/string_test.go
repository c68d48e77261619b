package query

import (
	"reflect"
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	tests := []struct {
		n    Node
		want string
	}{
		{&Term{Text: "alice"}, `"alice"`},
		{&Term{Text: "config", Prefix: true}, `"config"*`},
		{&Term{Text: `say "hi"`}, `"say ""hi"""`}, // quotes are escaped, never syntax
		{&Phrase{Terms: []string{"open", "source"}}, `"open source"`},
		{&And{Children: []Node{&Term{Text: "a"}, &Term{Text: "b"}}}, `("a" AND "b")`},
		{&Or{Children: []Node{&Term{Text: "alice"}, &Term{Text: "like"}}}, `("alice" OR "like")`},
		{&Not{Positive: &Term{Text: "a"}, Negative: &Term{Text: "b"}}, `("a" NOT "b")`},
		{&Near{Groups: []Node{&Term{Text: "a"}, &Phrase{Terms: []string{"b", "c"}}}, Distance: 5}, `NEAR("a" "b c", 5)`},
		{&And{Children: []Node{&Term{Text: "a"}, nil}}, `("a" AND <nil>)`},
	}
	for _, tc := range tests {
		if got := tc.n.String(); got != tc.want {
			t.Errorf("String() = %s, want %s", got, tc.want)
		}
	}
	// A hand-built term with a quote still reaches FTS5 as one quoted string.
	if _, err := ftsMatch(ftsDB(t), (&Term{Text: `and" OR "x`}).String()); err != nil {
		t.Errorf("FTS5 rejects an escaped quote: %v", err)
	}
}

func TestWalk(t *testing.T) {
	n, err := Parse(`a OR (b NOT NEAR(c "d e")) f*`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	Walk(n, func(n Node) bool {
		got = append(got, strings.TrimPrefix(reflect.TypeOf(n).String(), "*query."))
		return true
	})
	want := []string{"Or", "Term", "And", "Not", "Term", "Near", "Term", "Phrase", "Term"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Walk visited %v, want %v", got, want)
	}
	// Returning false skips the children.
	got = nil
	Walk(n, func(n Node) bool {
		got = append(got, n.String())
		_, isAnd := n.(*And)
		return !isAnd
	})
	if len(got) != 3 {
		t.Errorf("Walk with pruning visited %v, want Or, a and the And", got)
	}
	Walk(nil, func(Node) bool { t.Error("fn called for nil"); return true })
}

func TestPositiveTerms(t *testing.T) {
	tests := []struct {
		q    string
		want []string
	}{
		{"alice", []string{"alice"}},
		{"alice NOT bob", []string{"alice"}},
		{"(a NOT b) NOT c", []string{"a"}},
		{"x OR (a NOT (b NOT c))", []string{"x", "a"}},
		{`open-source conf* NEAR(alice "e-mail bob") alice`, []string{"open", "source", "conf", "alice", "e", "mail", "bob"}},
	}
	for _, tc := range tests {
		n, err := Parse(tc.q)
		if err != nil {
			t.Fatal(err)
		}
		if got := PositiveTerms(n); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("PositiveTerms(%q) = %q, want %q", tc.q, got, tc.want)
		}
	}
	if got := PositiveTerms(nil); len(got) != 0 {
		t.Errorf("PositiveTerms(nil) = %q", got)
	}
}

func TestValidate(t *testing.T) {
	a, b := &Term{Text: "a"}, &Term{Text: "b"}
	bad := []struct {
		n    Node
		want string
	}{
		{nil, "nil node"},
		{(*Term)(nil), "nil term"},
		{&Term{Text: ""}, "not a single token"},
		{&Term{Text: "Alice"}, "not a single token"},
		{&Term{Text: "open source"}, "not a single token"},
		{&Phrase{Terms: []string{"a"}}, "at least two terms"},
		{&And{Children: []Node{a}}, "And has 1 children"},
		{&Or{}, "Or has 0 children"},
		{&Or{Children: []Node{a, nil}}, "nil node"},
		{&Not{Positive: a}, "nil node"},
		{&Near{Groups: []Node{a}}, "at least two groups"},
		{&Near{Groups: []Node{a, &Or{Children: []Node{a, b}}}}, "must be a term or a phrase"},
		{&Near{Groups: []Node{a, b}, Distance: -1}, "outside"},
		{&Or{Children: func() []Node {
			var kids []Node
			for range MaxTerms + 1 {
				kids = append(kids, a)
			}
			return kids
		}()}, "65 terms"},
	}
	for _, tc := range bad {
		err := Validate(tc.n)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate(%#v) = %v, want an error containing %q", tc.n, err, tc.want)
		}
	}
	n, _ := Parse(deep(MaxDepth))
	if err := Validate(n); err != nil {
		t.Errorf("Validate(deepest parsed query): %v", err)
	}
	if err := Validate(&Not{Positive: n, Negative: b}); err == nil {
		t.Error("Validate accepted a query nested deeper than MaxDepth")
	}
}

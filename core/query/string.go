package query

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/memos-go/memos/core/text"
)

var (
	_ Node = (*Term)(nil)
	_ Node = (*Phrase)(nil)
	_ Node = (*And)(nil)
	_ Node = (*Or)(nil)
	_ Node = (*Not)(nil)
	_ Node = (*Near)(nil)
)

// The String methods render canonical FTS5 query text: every token is
// double-quoted (so no word is ever read as an operator or column filter)
// and every And, Or and Not is parenthesised, so the text means the same to
// FTS5 whatever its precedence rules. For every AST that Parse or Natural
// returns, the text is valid FTS5 and Parse(n.String()) returns an AST equal
// to n. A nil child renders as <nil>, which FTS5 rejects; use Validate to
// check hand-built trees.

func quote(b *strings.Builder, s string) {
	b.WriteByte('"')
	b.WriteString(strings.ReplaceAll(s, `"`, `""`))
	b.WriteByte('"')
}

func write(b *strings.Builder, n Node) {
	switch n := n.(type) {
	case nil:
		b.WriteString("<nil>")
	case *Term:
		quote(b, n.Text)
		if n.Prefix {
			b.WriteByte('*')
		}
	case *Phrase:
		quote(b, strings.Join(n.Terms, " "))
	case *And:
		writeList(b, n.Children, " AND ")
	case *Or:
		writeList(b, n.Children, " OR ")
	case *Not:
		writeList(b, []Node{n.Positive, n.Negative}, " NOT ")
	case *Near:
		b.WriteString("NEAR(")
		for i, g := range n.Groups {
			if i > 0 {
				b.WriteByte(' ')
			}
			write(b, g)
		}
		b.WriteString(", ")
		b.WriteString(strconv.Itoa(n.Distance))
		b.WriteByte(')')
	default:
		b.WriteString(n.String())
	}
}

func writeList(b *strings.Builder, kids []Node, op string) {
	b.WriteByte('(')
	for i, k := range kids {
		if i > 0 {
			b.WriteString(op)
		}
		write(b, k)
	}
	b.WriteByte(')')
}

func render(n Node) string {
	var b strings.Builder
	write(&b, n)
	return b.String()
}

// String renders t as `"text"`, or `"text"*` for a prefix term.
func (t *Term) String() string { return render(t) }

// String renders p as `"tok1 tok2"`.
func (p *Phrase) String() string { return render(p) }

// String renders a as `(x AND y)`.
func (a *And) String() string { return render(a) }

// String renders o as `(x OR y)`.
func (o *Or) String() string { return render(o) }

// String renders n as `(x NOT y)`.
func (n *Not) String() string { return render(n) }

// String renders n as `NEAR("a" "b c", 10)`, always with the distance.
func (n *Near) String() string { return render(n) }

// Walk calls fn for n and then, if fn returns true, walks n's children in
// order (And and Or children, Not's Positive then Negative, Near groups).
// Nil nodes are skipped.
func Walk(n Node, fn func(Node) bool) {
	if n == nil || !fn(n) {
		return
	}
	switch n := n.(type) {
	case *And:
		for _, c := range n.Children {
			Walk(c, fn)
		}
	case *Or:
		for _, c := range n.Children {
			Walk(c, fn)
		}
	case *Not:
		Walk(n.Positive, fn)
		Walk(n.Negative, fn)
	case *Near:
		for _, g := range n.Groups {
			Walk(g, fn)
		}
	}
}

// PositiveTerms returns the tokens a matching document must or may contain:
// every term and phrase token outside the negative side of a Not, each once,
// in order of appearance. A prefix term contributes its prefix. Use it to
// highlight matches or to build the text of a query's embedding.
func PositiveTerms(n Node) []string {
	var out []string
	add := func(t string) {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	var visit func(Node) bool
	visit = func(n Node) bool {
		switch n := n.(type) {
		case *Term:
			add(n.Text)
		case *Phrase:
			for _, t := range n.Terms {
				add(t)
			}
		case *Not:
			Walk(n.Positive, visit)
			return false
		}
		return true
	}
	Walk(n, visit)
	return out
}

// Validate reports whether n is a well-formed AST of the kind Parse
// returns, so that its String is valid FTS5 and every backend can run it:
// no nil nodes; terms are single tokens as text.Tokenize produces them; phrases
// have at least two; And and Or have at least two children; Near groups are
// terms or phrases and its distance is within [0, MaxNearDistance]; at most
// MaxTerms tokens and MaxDepth nesting. Backends may call it on ASTs that
// did not come from Parse or Natural.
func Validate(n Node) error {
	terms := 0
	var check func(n Node) error
	checkTerm := func(t string) error {
		terms++
		if toks := text.Tokenize(t); len(toks) != 1 || toks[0] != t {
			return fmt.Errorf("query: term %q is not a single token as text.Tokenize produces it", t)
		}
		return nil
	}
	checkKids := func(kind string, kids []Node) error {
		if len(kids) < 2 {
			return fmt.Errorf("query: %s has %d children; it needs at least two", kind, len(kids))
		}
		for _, k := range kids {
			if err := check(k); err != nil {
				return err
			}
		}
		return nil
	}
	check = func(n Node) error {
		switch n := n.(type) {
		case nil:
			return errors.New("query: nil node")
		case *Term:
			if n == nil {
				return errors.New("query: nil term")
			}
			return checkTerm(n.Text)
		case *Phrase:
			if n == nil || len(n.Terms) < 2 {
				return errors.New("query: a phrase needs at least two terms (one is a Term)")
			}
			for _, t := range n.Terms {
				if err := checkTerm(t); err != nil {
					return err
				}
			}
		case *And:
			if n == nil {
				return errors.New("query: nil And")
			}
			return checkKids("And", n.Children)
		case *Or:
			if n == nil {
				return errors.New("query: nil Or")
			}
			return checkKids("Or", n.Children)
		case *Not:
			if n == nil {
				return errors.New("query: nil Not")
			}
			if err := check(n.Positive); err != nil {
				return err
			}
			return check(n.Negative)
		case *Near:
			if n == nil || len(n.Groups) < 2 {
				return errors.New("query: NEAR needs at least two groups")
			}
			if n.Distance < 0 || n.Distance > MaxNearDistance {
				return fmt.Errorf("query: NEAR distance %d is outside [0, %d]", n.Distance, MaxNearDistance)
			}
			for _, g := range n.Groups {
				switch g.(type) {
				case *Term, *Phrase:
				default:
					return fmt.Errorf("query: a NEAR group must be a term or a phrase, not %T", g)
				}
				if err := check(g); err != nil {
					return err
				}
			}
		default:
			return fmt.Errorf("query: unknown node type %T", n)
		}
		return nil
	}
	if err := check(n); err != nil {
		return err
	}
	if terms > MaxTerms {
		return fmt.Errorf("query: %d terms; the limit is %d", terms, MaxTerms)
	}
	if d := depth(n); d > MaxDepth {
		return fmt.Errorf("query: operators nest %d deep; the limit is %d", d, MaxDepth)
	}
	return nil
}

// Package match evaluates keyword query ASTs (package core/query) against a
// text in memory, with the semantics of memos' keyword indexes: tokens as
// query.Tokenize makes them, English Porter stems as SQLite FTS5's porter
// tokenizer computes them, phrases of adjacent tokens, prefix terms, AND,
// OR, binary NOT and NEAR.
//
// The engine uses it where no index can answer: to ask whether an old
// version of a memory matched a query (searches "as of" a past time), and to
// tell which of a query's terms a candidate contains (the relevance gate and
// explain). It is exact for matching; it does not score.
package match

import (
	"slices"

	"github.com/memos-go/memos/core/query"
)

// Doc is a text prepared for matching: the positions of each stemmed token.
// A Doc is immutable and safe for concurrent use.
type Doc struct {
	pos map[string][]int
	n   int
}

// NewDoc tokenizes and stems text.
func NewDoc(text string) *Doc {
	toks := query.Tokenize(text)
	d := &Doc{pos: make(map[string][]int, len(toks)), n: len(toks)}
	for i, t := range toks {
		s := Stem(t)
		d.pos[s] = append(d.pos[s], i)
	}
	return d
}

// Len is the number of tokens in the text.
func (d *Doc) Len() int { return d.n }

// Match reports whether the text matches n. A nil node matches nothing.
func (d *Doc) Match(n query.Node) bool {
	switch n := n.(type) {
	case *query.Term:
		return n != nil && len(d.instances(phraseOf([]string{n.Text}, n.Prefix))) > 0
	case *query.Phrase:
		return n != nil && len(d.instances(phraseOf(n.Terms, false))) > 0
	case *query.And:
		if n == nil || len(n.Children) == 0 {
			return false
		}
		for _, k := range n.Children {
			if !d.Match(k) {
				return false
			}
		}
		return true
	case *query.Or:
		if n == nil {
			return false
		}
		for _, k := range n.Children {
			if d.Match(k) {
				return true
			}
		}
		return false
	case *query.Not:
		return n != nil && d.Match(n.Positive) && !d.Match(n.Negative)
	case *query.Near:
		return n != nil && d.near(n)
	}
	return false
}

// Leaves returns the terms and phrases of n (in query order, without
// duplicates, as canonical strings) that occur in the text, whatever the
// operators around them: which parts of a query a text "hit".
func (d *Doc) Leaves(n query.Node) []string {
	var out []string
	var walk func(n query.Node)
	walk = func(n query.Node) {
		switch n := n.(type) {
		case *query.Term, *query.Phrase:
			if d.Match(n) && !slices.Contains(out, n.String()) {
				out = append(out, n.String())
			}
		case *query.And:
			for _, k := range n.Children {
				walk(k)
			}
		case *query.Or:
			for _, k := range n.Children {
				walk(k)
			}
		case *query.Not:
			walk(n.Positive)
		case *query.Near:
			for _, g := range n.Groups {
				walk(g)
			}
		}
	}
	walk(n)
	return out
}

// phrase is a query phrase ready to match: stemmed tokens, the last one a
// prefix when prefix is set.
type phrase struct {
	toks   []string
	prefix bool
}

func phraseOf(words []string, prefix bool) phrase {
	var p phrase
	for _, w := range words {
		// AST terms are already tokens; tokenizing again treats a term that
		// is not one token the way FTS5 treats the quoted string.
		for _, t := range query.Tokenize(w) {
			p.toks = append(p.toks, Stem(t))
		}
	}
	p.prefix = prefix
	return p
}

// positions returns the sorted positions of stem t, or of every stem that
// starts with t when prefix is set.
func (d *Doc) positions(t string, prefix bool) []int {
	if !prefix {
		return d.pos[t]
	}
	var out []int
	for s, ps := range d.pos {
		if len(s) >= len(t) && s[:len(t)] == t {
			out = append(out, ps...)
		}
	}
	slices.Sort(out)
	return out
}

// instances returns the start positions of p in the text.
func (d *Doc) instances(p phrase) []int {
	if len(p.toks) == 0 {
		return nil
	}
	last := len(p.toks) - 1
	first := d.positions(p.toks[0], p.prefix && last == 0)
	if last == 0 {
		return first
	}
	var out []int
outer:
	for _, s := range first {
		for i := 1; i <= last; i++ {
			if _, ok := slices.BinarySearch(d.positions(p.toks[i], p.prefix && i == last), s+i); !ok {
				continue outer
			}
		}
		out = append(out, s)
	}
	return out
}

// near implements FTS5's NEAR: one instance of each group can be chosen so
// that, taking the latest-starting one as the last, it starts at most
// Distance tokens after the end of every other.
func (d *Doc) near(n *query.Near) bool {
	if len(n.Groups) == 0 || n.Distance < 0 {
		return false
	}
	insts := make([][]int, len(n.Groups))
	widths := make([]int, len(n.Groups))
	for i, g := range n.Groups {
		var p phrase
		switch g := g.(type) {
		case *query.Term:
			p = phraseOf([]string{g.Text}, g.Prefix)
		case *query.Phrase:
			p = phraseOf(g.Terms, false)
		default:
			return false
		}
		if insts[i] = d.instances(p); len(insts[i]) == 0 {
			return false
		}
		widths[i] = len(p.toks)
	}
	for gi, starts := range insts {
		for _, last := range starts {
			ok := true
			for j := range insts {
				if j == gi {
					continue
				}
				lo := last - widths[j] - n.Distance
				k, _ := slices.BinarySearch(insts[j], lo)
				if k == len(insts[j]) || insts[j][k] > last {
					ok = false
					break
				}
			}
			if ok {
				return true
			}
		}
	}
	return false
}

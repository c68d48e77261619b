package text

import (
	"fmt"
	"strings"
)

// A Query is a keyword query ready to evaluate: a tree of phrases (a term is
// a phrase of one token, perhaps a prefix) combined by AND, OR, NOT and NEAR,
// with FTS5's meaning. Build one with a Builder (package core/query compiles
// its AST into one with query.Compile). A Query is immutable and safe for
// concurrent use.
type Query struct {
	root    *node
	phrases []*Phrase
}

// A Phrase is a phrase of a query: stemmed tokens that must be adjacent and
// in order, the last of them a prefix when Prefix is set. Callers must not
// modify it.
type Phrase struct {
	Tokens []string
	Prefix bool

	label    string // the source leaf, for Leaves
	negative bool   // under the negative side of a NOT
}

// Key identifies the phrase's tokens: phrases with equal keys occur in the
// same documents.
func (p *Phrase) Key() string {
	k := strings.Join(p.Tokens, " ")
	if p.Prefix {
		k += "*"
	}
	return k
}

// Op is the operator of a node of a Query.
type Op int

// The operators. A query's tree has no OpNone below its root: an operand
// that matches nothing is folded away when the query is built.
const (
	OpPhrase Op = iota // a phrase (Expr.Phrase)
	OpAnd              // every operand
	OpOr               // any operand
	OpNot              // Kids()[0] NOT Kids()[1]
	OpNear             // the operands, all phrases, near each other
	OpNone             // matches nothing
)

type node struct {
	kind Op
	ph   int // index of the phrase, OpPhrase
	kids []*node
	dist int
}

// An Expr is a node of a query: under construction by a Builder, or read
// from a built Query (Query.Root) by a backend that translates the query
// into its index's own to find candidates.
type Expr struct{ n *node }

// Op returns the node's operator.
func (e Expr) Op() Op { return e.n.kind }

// Kids returns the node's operands.
func (e Expr) Kids() []Expr {
	out := make([]Expr, len(e.n.kids))
	for i, k := range e.n.kids {
		out[i] = Expr{k}
	}
	return out
}

// Phrase returns the index in Query.Phrases of an OpPhrase node's phrase.
func (e Expr) Phrase() int { return e.n.ph }

// A Builder builds one Query. Phrases are numbered in the order they are
// built, which is the order in which FTS5's bm25 sums them: build them in
// query order. A Builder is not safe for concurrent use.
type Builder struct {
	phrases []*Phrase
}

// Phrase returns a phrase of words: each word is tokenized (a word that is
// several tokens behaves as FTS5 treats the quoted string) and stemmed; the
// last token is a prefix when prefix is set. label names the leaf in Leaves
// (package query uses its canonical text). A phrase without tokens matches
// nothing.
func (b *Builder) Phrase(words []string, prefix bool, label string) Expr {
	var toks []string
	for _, w := range words {
		toks = AppendTokens(toks, w)
	}
	for i, t := range toks {
		toks[i] = Stem(t)
	}
	if len(toks) == 0 {
		return Expr{&node{kind: OpNone}}
	}
	b.phrases = append(b.phrases, &Phrase{Tokens: toks, Prefix: prefix, label: label})
	return Expr{&node{kind: OpPhrase, ph: len(b.phrases) - 1}}
}

// And returns the conjunction of kids (at least one).
func (b *Builder) And(kids ...Expr) (Expr, error) { return b.andOr(OpAnd, kids) }

// Or returns the disjunction of kids (at least one).
func (b *Builder) Or(kids ...Expr) (Expr, error) { return b.andOr(OpOr, kids) }

func (b *Builder) andOr(k Op, kids []Expr) (Expr, error) {
	if len(kids) == 0 {
		return Expr{}, fmt.Errorf("an AND or OR without operands")
	}
	out := &node{kind: k}
	for _, kid := range kids {
		switch {
		case kid.n.kind == OpNone && k == OpAnd:
			return kid, nil
		case kid.n.kind == OpNone:
			continue
		}
		out.kids = append(out.kids, kid.n)
	}
	switch len(out.kids) {
	case 0:
		return Expr{&node{kind: OpNone}}, nil
	case 1:
		return Expr{out.kids[0]}, nil
	}
	return Expr{out}, nil
}

// Not returns FTS5's binary "pos NOT neg". The phrases of neg are never
// reported by Leaves.
func (b *Builder) Not(pos, neg Expr) Expr {
	b.markNegative(neg.n)
	if pos.n.kind == OpNone || neg.n.kind == OpNone {
		return pos
	}
	return Expr{&node{kind: OpNot, kids: []*node{pos.n, neg.n}}}
}

func (b *Builder) markNegative(n *node) {
	if n.kind == OpPhrase {
		b.phrases[n.ph].negative = true
	}
	for _, k := range n.kids {
		b.markNegative(k)
	}
}

// Near returns FTS5's NEAR of groups, each made by Phrase, within distance
// tokens.
func (b *Builder) Near(distance int, groups ...Expr) (Expr, error) {
	if distance < 0 {
		return Expr{}, fmt.Errorf("NEAR distance %d is negative", distance)
	}
	if len(groups) == 0 {
		return Expr{}, fmt.Errorf("a NEAR without groups")
	}
	out := &node{kind: OpNear, dist: distance}
	for _, g := range groups {
		switch g.n.kind {
		case OpNone:
			return g, nil
		case OpPhrase:
			out.kids = append(out.kids, g.n)
		default:
			return Expr{}, fmt.Errorf("a NEAR group must be a term or a phrase")
		}
	}
	if len(out.kids) == 1 {
		return Expr{out.kids[0]}, nil
	}
	return Expr{out}, nil
}

// Query returns the query whose root is root. The Builder must not be used
// afterwards.
func (b *Builder) Query(root Expr) *Query {
	return &Query{root: root.n, phrases: b.phrases}
}

// Root returns the query's root node.
func (q *Query) Root() Expr { return Expr{q.root} }

// Phrases returns the query's phrases in query order; bm25's frequencies and
// inverse document frequencies are indexed like it. The caller must not
// modify them.
func (q *Query) Phrases() []*Phrase { return q.phrases }

// None reports whether the query matches no document whatever the corpus
// (every way to match needs a phrase without tokens).
func (q *Query) None() bool { return q.root.kind == OpNone }

// HasNot reports whether the query has a NOT: only then can a document it
// matches lack some of the query's tokens that bm25 counts (see Doc).
func (q *Query) HasNot() bool { return hasNot(q.root) }

func hasNot(n *node) bool {
	if n.kind == OpNot {
		return true
	}
	for _, k := range n.kids {
		if hasNot(k) {
			return true
		}
	}
	return false
}

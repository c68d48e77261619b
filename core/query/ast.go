// Package query is memos' query language, shared by every backend: a parser
// for the FTS5 query syntax (AND, OR, NOT, "phrases", prefix*, parentheses,
// NEAR(a b, N)) into an AST, and a natural-language mode that rewrites free
// text into a safe OR of terms.
//
// Backends never see user text: they translate the AST (sqlite renders it as a
// fully quoted FTS5 MATCH expression, bolt as bleve queries), so a query means
// the same thing on every backend.
//
// Terms in the AST are already tokenized the way the keyword indexes tokenize
// text (text.Tokenize: Unicode letters and digits; everything else separates
// tokens) and lower-cased. Stemming is left to the index (porter in both
// backends). Compile turns an AST into a text.Query, which evaluates and
// scores it in memory with FTS5's meaning for backends without FTS5.
package query

// Node is a node of the query AST: *Term, *Phrase, *And, *Or, *Not or *Near.
type Node interface {
	node()
	// String renders the node in canonical FTS5 syntax, every term quoted.
	String() string
}

// Term matches documents containing one token. With Prefix it matches any
// token starting with Text ("config*").
type Term struct {
	Text   string
	Prefix bool
}

// Phrase matches documents containing its tokens adjacent and in order.
// A phrase of one token is a Term; the parser never produces one.
type Phrase struct {
	Terms []string
}

// And matches documents matching every child (at least two).
type And struct{ Children []Node }

// Or matches documents matching any child (at least two).
type Or struct{ Children []Node }

// Not matches documents matching Positive and not matching Negative
// (FTS5's binary "a NOT b"; a NOT without a left operand is a syntax error).
type Not struct{ Positive, Negative Node }

// Near matches documents where all Groups occur close together, in any order
// (FTS5 NEAR semantics): taking the groups in document order, at most
// Distance tokens lie between the end of the first group and the start of the
// last, tokens of the groups in between included. Each group is a *Term or a
// *Phrase.
type Near struct {
	Groups   []Node
	Distance int
}

// DefaultNearDistance is NEAR's distance when none is given, as in FTS5.
const DefaultNearDistance = 10

func (*Term) node()   {}
func (*Phrase) node() {}
func (*And) node()    {}
func (*Or) node()     {}
func (*Not) node()    {}
func (*Near) node()   {}

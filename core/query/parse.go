package query

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/memos-go/memos/core/text"
)

// Limits on what Parse accepts. They keep a query cheap for every backend
// and keep the rendered FTS5 text within SQLite's parser stack (FTS5 fails
// with "parser stack overflow" at about 32 right-nested operators).
const (
	// MaxQueryBytes is the longest query Parse accepts, in bytes.
	MaxQueryBytes = 4096
	// MaxTerms is the most tokens a query may contain, counting every
	// token of every word and phrase (a NEAR group's included).
	MaxTerms = 64
	// MaxDepth is how deep And, Or and Not nodes may nest in a parsed query.
	MaxDepth = 20
	// MaxNearDistance is the largest NEAR distance Parse accepts.
	MaxNearDistance = 1000000
)

// SyntaxError reports a query Parse rejects: what was wrong and where.
// Column is 1-based and counted in runes; 0 means the error concerns the
// whole query (empty, too long, nothing to search for).
type SyntaxError struct {
	Column int
	Msg    string
}

func (e *SyntaxError) Error() string {
	if e.Column > 0 {
		return fmt.Sprintf("query: %s at column %d", e.Msg, e.Column)
	}
	return "query: " + e.Msg
}

func errAt(col int, format string, args ...any) *SyntaxError {
	return &SyntaxError{Column: col, Msg: fmt.Sprintf(format, args...)}
}

// Parse parses s in the FTS5 query syntax into an AST. It returns a
// *SyntaxError when s is not a valid query.
//
// The syntax, with precedence and associativity as in SQLite FTS5
// (measured against FTS5 by the differential test), tightest first:
//
//	a b          implicit AND (juxtaposition)
//	a NOT b      binary NOT: a and not b, left-associative
//	a AND b      AND
//	a OR b       OR
//
// so "a OR b c NOT d AND e" is "a OR (((b AND c) NOT d) AND e)". Operators
// are the upper-case keywords; "and" or "Or" are ordinary words. Operands are:
//
//	word         a bareword, tokenized with text.Tokenize: one token is a *Term,
//	             several ("open-source", "v2.1") a *Phrase, none ("~", "-")
//	             is dropped silently
//	"a phrase"   a quoted string ("" inside it is a literal quote), tokenized
//	             the same way
//	word*        a prefix term, also "word"*; a * after a phrase is rejected
//	             because the AST has no prefix phrases
//	( ... )      grouping
//	NEAR(a "b c" d, N)  words and phrases close together (N optional,
//	             DefaultNearDistance)
//
// NEAR matches as FTS5's does (measured): every group occurs, and in
// document order at most N tokens lie between the end of the first group
// and the start of the last one, tokens of the groups in between included.
// So NEAR(one four seven, 5) matches "one two three four five six seven"
// but NEAR(one four seven, 4) does not.
//
// Departures from FTS5: a parenthesised group may be juxtaposed with other
// operands ("a (b OR c)" is "a AND (b OR c)"; FTS5 rejects it); column
// filters, "+" phrase joins and "^" initial-token anchors are not syntax,
// so "nodes:x" is the phrase "nodes x", "a + b" is "a AND b" and "^a" is
// "a"; an empty operand such as `""` or "~" is dropped (in FTS5 `a AND ""`
// matches nothing). And and Or nodes are flattened: "a AND (b AND c)" is
// one And with three children.
//
// A query must not be longer than MaxQueryBytes, contain more than MaxTerms
// tokens, nest operators deeper than MaxDepth or be invalid UTF-8.
func Parse(s string) (Node, error) {
	if len(s) > MaxQueryBytes {
		return nil, errAt(0, "query is too long (%d bytes; the limit is %d)", len(s), MaxQueryBytes)
	}
	if !utf8.ValidString(s) {
		col := 1
		for i, r := range s {
			if r == utf8.RuneError {
				if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
					break
				}
			}
			col++
		}
		return nil, errAt(col, "invalid UTF-8")
	}
	if strings.TrimSpace(s) == "" {
		return nil, errAt(0, "empty query")
	}
	p := &parser{src: s, col: 1}
	if err := p.next(); err != nil {
		return nil, err
	}
	n, err := p.parseOr(nil)
	if err != nil {
		return nil, err
	}
	switch p.tok.kind {
	case tEOF:
	case tRParen:
		return nil, errAt(p.tok.col, "unbalanced parenthesis")
	default: // only a stray * can stop parseOr here
		return nil, errAt(p.tok.col, "* must follow a word")
	}
	if n == nil {
		return nil, errAt(0, "nothing to search for")
	}
	if d := depth(n); d > MaxDepth {
		return nil, errAt(0, "operators nest %d deep; the limit is %d, simplify the query", d, MaxDepth)
	}
	return n, nil
}

type tokKind int

const (
	tEOF tokKind = iota
	tWord
	tString
	tLParen
	tRParen
	tStar
	tComma
	tAnd
	tOr
	tNot
	tNear // "NEAR" and its opening parenthesis
)

type token struct {
	kind tokKind
	text string // tWord: the word; tString: the unescaped contents
	col  int    // 1-based rune column of the token's first rune
	col2 int    // tNear: column of its "("
}

// parser is a recursive-descent parser over an on-demand lexer; tok is the
// current (not yet consumed) token.
type parser struct {
	src    string
	pos    int  // byte offset of the next unread rune
	col    int  // rune column of the next unread rune
	inNear bool // inside NEAR(...), where "," is a token
	tok    token
	terms  int // tokens seen so far, for MaxTerms
}

func isSpace(r rune) bool { return unicode.IsSpace(r) }

func (p *parser) isWordRune(r rune) bool {
	switch r {
	case '"', '(', ')', '*':
		return false
	case ',':
		return !p.inNear
	}
	return !isSpace(r)
}

// peekRune returns the next unread rune and its size, or size 0 at the end.
func (p *parser) peekRune() (rune, int) {
	if p.pos >= len(p.src) {
		return 0, 0
	}
	return utf8.DecodeRuneInString(p.src[p.pos:])
}

func (p *parser) advance(size int) { p.pos += size; p.col++ }

func (p *parser) skipSpace() {
	for {
		r, size := p.peekRune()
		if size == 0 || !isSpace(r) {
			return
		}
		p.advance(size)
	}
}

// next lexes the next token into p.tok.
func (p *parser) next() error {
	p.skipSpace()
	r, size := p.peekRune()
	p.tok = token{col: p.col}
	if size == 0 {
		p.tok.kind = tEOF
		return nil
	}
	switch {
	case r == '"':
		return p.lexString()
	case r == '(':
		p.tok.kind = tLParen
	case r == ')':
		p.tok.kind = tRParen
	case r == '*':
		p.tok.kind = tStar
	case r == ',' && p.inNear:
		p.tok.kind = tComma
	default:
		p.lexWord()
		return nil
	}
	p.advance(size)
	return nil
}

// lexWord lexes a bareword, which may be an operator keyword.
func (p *parser) lexWord() {
	start := p.pos
	for {
		r, size := p.peekRune()
		if size == 0 || !p.isWordRune(r) {
			break
		}
		p.advance(size)
	}
	word := p.src[start:p.pos]
	p.tok.kind, p.tok.text = tWord, word
	switch word {
	case "AND":
		p.tok.kind = tAnd
	case "OR":
		p.tok.kind = tOr
	case "NOT":
		p.tok.kind = tNot
	case "NEAR":
		// NEAR is an operator only when a "(" follows, as in FTS5.
		pos, col := p.pos, p.col
		p.skipSpace()
		if r, size := p.peekRune(); size > 0 && r == '(' {
			p.tok.kind, p.tok.col2 = tNear, p.col
			p.advance(size)
		} else {
			p.pos, p.col = pos, col
		}
	}
}

// lexString lexes a double-quoted string; "" inside it is a literal quote.
func (p *parser) lexString() error {
	p.tok.kind = tString
	p.advance(1)
	var b strings.Builder
	for {
		r, size := p.peekRune()
		if size == 0 {
			return errAt(p.tok.col, "unbalanced quote")
		}
		p.advance(size)
		if r == '"' {
			if r2, size2 := p.peekRune(); size2 > 0 && r2 == '"' {
				p.advance(size2)
				b.WriteByte('"')
				continue
			}
			p.tok.text = b.String()
			return nil
		}
		b.WriteRune(r)
	}
}

func startsOperand(k tokKind) bool {
	return k == tWord || k == tString || k == tLParen || k == tNear
}

var opName = map[tokKind]string{tAnd: "AND", tOr: "OR", tNot: "NOT"}

// operandError explains why p.tok cannot start an operand. prev is the
// operator that needs it, or nil at the start of the query or a group.
func (p *parser) operandError(prev *token) error {
	t := p.tok
	switch t.kind {
	case tAnd, tOr, tNot:
		return errAt(t.col, "%s needs a left operand", opName[t.kind])
	case tStar:
		return errAt(t.col, "* must follow a word")
	}
	if prev != nil {
		return errAt(prev.col, "%s needs a right operand", opName[prev.kind])
	}
	if t.kind == tRParen {
		return errAt(t.col, "unbalanced parenthesis")
	}
	return errAt(0, "empty query")
}

// parseOr parses "x OR y ...". prev is the operator before it, if any.
func (p *parser) parseOr(prev *token) (Node, error) {
	first, err := p.parseAnd(prev)
	if err != nil {
		return nil, err
	}
	kids := []Node{first}
	for p.tok.kind == tOr {
		op := p.tok
		if err := p.next(); err != nil {
			return nil, err
		}
		n, err := p.parseAnd(&op)
		if err != nil {
			return nil, err
		}
		kids = append(kids, n)
	}
	return join(kids, false), nil
}

func (p *parser) parseAnd(prev *token) (Node, error) {
	first, err := p.parseNot(prev)
	if err != nil {
		return nil, err
	}
	kids := []Node{first}
	for p.tok.kind == tAnd {
		op := p.tok
		if err := p.next(); err != nil {
			return nil, err
		}
		n, err := p.parseNot(&op)
		if err != nil {
			return nil, err
		}
		kids = append(kids, n)
	}
	return join(kids, true), nil
}

func (p *parser) parseNot(prev *token) (Node, error) {
	left, err := p.parseSeq(prev)
	if err != nil {
		return nil, err
	}
	for p.tok.kind == tNot {
		op := p.tok
		if err := p.next(); err != nil {
			return nil, err
		}
		right, err := p.parseSeq(&op)
		if err != nil {
			return nil, err
		}
		// A dropped operand leaves nothing to subtract (keep left), or
		// nothing to subtract from (drop the whole NOT).
		switch {
		case left == nil:
		case right == nil:
		default:
			left = &Not{Positive: left, Negative: right}
		}
	}
	return left, nil
}

// parseSeq parses juxtaposed operands: the implicit AND.
func (p *parser) parseSeq(prev *token) (Node, error) {
	if !startsOperand(p.tok.kind) {
		return nil, p.operandError(prev)
	}
	var kids []Node
	for startsOperand(p.tok.kind) {
		n, err := p.parsePrimary()
		if err != nil {
			return nil, err
		}
		kids = append(kids, n)
	}
	return join(kids, true), nil
}

func (p *parser) parsePrimary() (Node, error) {
	switch p.tok.kind {
	case tWord, tString:
		return p.parseLeaf()
	case tNear:
		return p.parseNear()
	}
	// tLParen
	open := p.tok
	if err := p.next(); err != nil {
		return nil, err
	}
	if p.tok.kind == tRParen {
		return nil, errAt(open.col, "empty parentheses")
	}
	if p.tok.kind == tEOF {
		return nil, errAt(open.col, "unbalanced parenthesis")
	}
	n, err := p.parseOr(nil)
	if err != nil {
		return nil, err
	}
	switch p.tok.kind {
	case tRParen:
	case tEOF:
		return nil, errAt(open.col, "unbalanced parenthesis")
	default:
		return nil, errAt(p.tok.col, "* must follow a word")
	}
	if err := p.next(); err != nil {
		return nil, err
	}
	if p.tok.kind == tStar {
		return nil, errAt(p.tok.col, "* must follow a word, not a parenthesis")
	}
	return n, nil
}

// parseLeaf parses a word or quoted string and an optional "*".
func (p *parser) parseLeaf() (Node, error) {
	t := p.tok
	toks := text.Tokenize(t.text)
	p.terms += len(toks)
	if p.terms > MaxTerms {
		return nil, errAt(t.col, "too many terms (the limit is %d)", MaxTerms)
	}
	if err := p.next(); err != nil {
		return nil, err
	}
	prefix := false
	if p.tok.kind == tStar {
		star := p.tok
		if len(toks) > 1 {
			return nil, errAt(star.col, "prefix * is supported after a single word, not after the phrase %q", strings.Join(toks, " "))
		}
		prefix = true
		if err := p.next(); err != nil {
			return nil, err
		}
		if p.tok.kind == tStar {
			return nil, errAt(p.tok.col, "* must follow a word")
		}
	}
	switch len(toks) {
	case 0:
		return nil, nil
	case 1:
		return &Term{Text: toks[0], Prefix: prefix}, nil
	}
	return &Phrase{Terms: toks}, nil
}

// parseNear parses NEAR(group group ..., N); p.tok is the NEAR token.
func (p *parser) parseNear() (Node, error) {
	near := p.tok
	p.inNear = true
	if err := p.next(); err != nil {
		return nil, err
	}
	var groups []Node
	seen := 0
	for p.tok.kind == tWord || p.tok.kind == tString {
		n, err := p.parseLeaf()
		if err != nil {
			return nil, err
		}
		seen++
		if n != nil {
			groups = append(groups, n)
		}
	}
	if seen == 0 && (p.tok.kind == tRParen || p.tok.kind == tComma) {
		return nil, errAt(near.col, "NEAR needs at least one word or phrase")
	}
	dist := DefaultNearDistance
	if p.tok.kind == tComma {
		comma := p.tok
		if err := p.next(); err != nil {
			return nil, err
		}
		t := p.tok
		if t.kind != tWord || !isDigits(t.text) {
			col := t.col
			if t.kind == tEOF || t.kind == tRParen {
				col = comma.col
			}
			return nil, errAt(col, "NEAR distance must be a non-negative integer")
		}
		digits := strings.TrimLeft(t.text, "0")
		d, err := strconv.Atoi("0" + digits)
		if err != nil || len(digits) > 9 || d > MaxNearDistance {
			return nil, errAt(t.col, "NEAR distance %s is too large (the limit is %d)", t.text, MaxNearDistance)
		}
		dist = d
		if err := p.next(); err != nil {
			return nil, err
		}
		if p.tok.kind != tRParen && p.tok.kind != tEOF {
			return nil, errAt(p.tok.col, "expected ) after the NEAR distance")
		}
	}
	switch {
	case p.tok.kind == tEOF:
		return nil, errAt(near.col2, "unbalanced parenthesis")
	case p.tok.kind != tRParen:
		return nil, errAt(p.tok.col, "NEAR takes only words and phrases, then an optional \", distance\"")
	}
	p.inNear = false
	if err := p.next(); err != nil {
		return nil, err
	}
	if p.tok.kind == tStar {
		return nil, errAt(p.tok.col, "* must follow a word, not NEAR(...)")
	}
	switch len(groups) {
	case 0:
		return nil, nil
	case 1: // NEAR of one group is the group itself, as in FTS5
		return groups[0], nil
	}
	return &Near{Groups: groups, Distance: dist}, nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// join combines operands under And (and=true) or Or, dropping nil operands
// and flattening children of the same kind. It returns nil when nothing
// remains and the operand itself when one does.
func join(kids []Node, and bool) Node {
	var out []Node
	for _, k := range kids {
		switch k := k.(type) {
		case nil:
		case *And:
			if and {
				out = append(out, k.Children...)
			} else {
				out = append(out, k)
			}
		case *Or:
			if !and {
				out = append(out, k.Children...)
			} else {
				out = append(out, k)
			}
		default:
			out = append(out, k)
		}
	}
	switch len(out) {
	case 0:
		return nil
	case 1:
		return out[0]
	}
	if and {
		return &And{Children: out}
	}
	return &Or{Children: out}
}

// depth is how deeply And, Or and Not nodes nest in n.
func depth(n Node) int {
	d := 0
	switch n := n.(type) {
	case *And:
		for _, c := range n.Children {
			d = max(d, depth(c))
		}
	case *Or:
		for _, c := range n.Children {
			d = max(d, depth(c))
		}
	case *Not:
		d = max(depth(n.Positive), depth(n.Negative))
	default:
		return 0
	}
	return d + 1
}

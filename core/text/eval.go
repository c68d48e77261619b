package text

import (
	"math"
	"slices"
	"strings"
)

// A Doc is a document prepared for evaluation: the positions of its stemmed
// tokens. A Doc is immutable once built and safe for concurrent use.
type Doc struct {
	pos map[string][]int
	n   int
}

// NewDoc tokenizes and stems text.
func NewDoc(text string) *Doc {
	toks := Tokenize(text)
	d := &Doc{pos: make(map[string][]int, len(toks)), n: len(toks)}
	for i, t := range toks {
		s := Stem(t)
		d.pos[s] = append(d.pos[s], i)
	}
	return d
}

// DocFunc returns NewDoc for evaluating q only: the Docs it makes hold
// the positions of q's tokens alone, which is all that evaluating, scoring
// and positioning q reads (the condition of DocOf holds: every phrase of q
// that a Doc contains has its positions), and it stems only the tokens
// that may have one of those stems (MayStemTo): most of a document's, and
// most of NewDoc's time, are not. For a query with a prefix it is NewDoc.
func (q *Query) DocFunc() func(text string) *Doc {
	var byFirst [256][]string // q's tokens by their first byte
	n := 0
	for _, p := range q.phrases {
		if p.Prefix {
			return NewDoc
		}
		for _, t := range p.Tokens {
			if t != "" && !slices.Contains(byFirst[t[0]], t) {
				byFirst[t[0]] = append(byFirst[t[0]], t)
				n++
			}
		}
	}
	return func(text string) *Doc {
		toks := Tokenize(text)
		d := &Doc{pos: make(map[string][]int, n), n: len(toks)}
		for i, t := range toks {
			if t == "" {
				continue
			}
			for _, s := range byFirst[t[0]] {
				if !mayStemTo(t, s) {
					continue
				}
				if st := Stem(t); slices.Contains(byFirst[t[0]], st) {
					d.pos[st] = append(d.pos[st], i)
				}
				break
			}
		}
		return d
	}
}

// DocOf returns the document whose stemmed tokens occur at pos (each list
// sorted ascending without duplicates; the Doc takes ownership) and that is
// length tokens long. A backend that keeps positions in its index passes
// those of the query's tokens only: a query reads no others, provided that,
// for a query with a NOT (Query.HasNot), the document carries the positions
// of every phrase of the query that it contains.
func DocOf(pos map[string][]int, length int) *Doc { return &Doc{pos: pos, n: length} }

// Len is the number of tokens in the document.
func (d *Doc) Len() int { return d.n }

// positions returns the sorted positions of token t, or of every token
// starting with t when prefix is set.
func (d *Doc) positions(t string, prefix bool) []int {
	if !prefix {
		return d.pos[t]
	}
	var out []int
	n := 0
	for tok, ps := range d.pos {
		if strings.HasPrefix(tok, t) {
			out = append(out, ps...)
			n++
		}
	}
	if n > 1 {
		slices.Sort(out)
		out = slices.Compact(out)
	}
	return out
}

// has reports whether the document has every token of p: FTS5 then
// positions p's node on it, whether or not the tokens are adjacent.
func (d *Doc) has(p *Phrase) bool {
	for i, t := range p.Tokens {
		if len(d.positions(t, p.Prefix && i == len(p.Tokens)-1)) == 0 {
			return false
		}
	}
	return true
}

// instances returns the positions at which p starts in the document.
func (d *Doc) instances(p *Phrase) []int {
	last := len(p.Tokens) - 1
	first := d.positions(p.Tokens[0], p.Prefix && last == 0)
	if last == 0 {
		return first
	}
	rest := make([][]int, last)
	for i := 1; i <= last; i++ {
		if rest[i-1] = d.positions(p.Tokens[i], p.Prefix && i == last); len(rest[i-1]) == 0 {
			return nil
		}
	}
	var out []int
outer:
	for _, s := range first {
		for i, ps := range rest {
			if _, ok := slices.BinarySearch(ps, s+i+1); !ok {
				continue outer
			}
		}
		out = append(out, s)
	}
	return out
}

// Contains reports whether p occurs in the document: a backend counts the
// documents that contain each phrase for its inverse document frequency.
func (d *Doc) Contains(p *Phrase) bool { return len(p.Tokens) > 0 && len(d.instances(p)) > 0 }

// Match reports whether the document matches the query.
func (q *Query) Match(d *Doc) bool {
	_, ok := q.eval(q.root, d, make([][]int, len(q.phrases)))
	return ok
}

// Leaves returns the labels of the query's phrases that occur in the
// document (in query order, without duplicates), whatever the operators
// around them, except the phrases under the negative side of a NOT: which
// parts of a query a text "hit".
func (q *Query) Leaves(d *Doc) []string {
	var out []string
	for _, p := range q.phrases {
		if !p.negative && !slices.Contains(out, p.label) && len(d.instances(p)) > 0 {
			out = append(out, p.label)
		}
	}
	return out
}

// Freq reports whether the document matches the query and, when it does,
// how many instances of each phrase (indexed like Phrases) FTS5's bm25
// counts for it, for Corpus.Score; add Stranded's for a query with a NOT.
func (q *Query) Freq(d *Doc) (match bool, freq []int) {
	inst := make([][]int, len(q.phrases))
	if _, ok := q.eval(q.root, d, inst); !ok {
		return false, nil
	}
	freq = make([]int, len(inst))
	for i, in := range inst {
		freq[i] = len(in)
	}
	return true, freq
}

// eval evaluates n on d the way FTS5 iterates its expression tree, and
// records in inst the instances of each phrase that FTS5's bm25 counts for
// the document. It reports whether n is positioned on the document (FTS5
// visits it there: the document has all the tokens n needs, and n's parents
// let it stop there) and whether n matches. A node that is positioned but
// does not match ("nomatch" in FTS5) still counts its phrases unless an
// enclosing AND zeroes them; NOT counts the phrases of a positioned negative
// side that does not match.
//
// The one difference from FTS5: when a NEAR group that is a phrase of
// several tokens does not occur, FTS5 leaves the instance lists of the later
// groups as they were on an earlier document; they count 0 here.
func (q *Query) eval(n *node, d *Doc, inst [][]int) (positioned, match bool) {
	switch n.kind {
	case OpPhrase:
		p := q.phrases[n.ph]
		if !d.has(p) {
			return false, false
		}
		inst[n.ph] = d.instances(p)
		return true, len(inst[n.ph]) > 0
	case OpNear:
		for _, k := range n.kids {
			if !d.has(q.phrases[k.ph]) {
				return false, false
			}
		}
		groups := make([][]int, len(n.kids))
		widths := make([]int, len(n.kids))
		for i, k := range n.kids {
			p := q.phrases[k.ph]
			groups[i] = d.instances(p)
			widths[i] = len(p.Tokens)
			inst[k.ph] = groups[i]
			if len(groups[i]) == 0 {
				return true, false // the later groups count 0, see above
			}
		}
		trimmed := nearMatch(groups, widths, n.dist)
		for i, k := range n.kids {
			inst[k.ph] = trimmed[i]
		}
		return true, len(trimmed[0]) > 0
	case OpAnd:
		pos, ok := true, true
		for _, k := range n.kids {
			p, m := q.eval(k, d, inst)
			pos = pos && p
			ok = ok && m
		}
		if !pos || !ok {
			clearInstances(n, inst)
		}
		return pos, pos && ok
	case OpOr:
		pos, ok := false, false
		for _, k := range n.kids {
			p, m := q.eval(k, d, inst)
			pos = pos || p
			ok = ok || m
		}
		return pos, ok
	case OpNot:
		p1, m1 := q.eval(n.kids[0], d, inst)
		if !p1 {
			clearInstances(n, inst)
			return false, false
		}
		p2, m2 := q.eval(n.kids[1], d, inst)
		if p2 && m2 {
			clearInstances(n, inst)
			return false, false
		}
		return true, m1
	}
	return false, false
}

func clearInstances(n *node, inst [][]int) {
	if n.kind == OpPhrase {
		inst[n.ph] = nil
		return
	}
	for _, k := range n.kids {
		clearInstances(k, inst)
	}
}

// nearMatch implements FTS5's NEAR: the groups (phrase start positions, each
// sorted, none empty; widths in tokens) match when one instance of each can be
// chosen so that the last of them starts at most dist tokens after the end of
// every other. It walks the instances the way FTS5 does and returns, per
// group, the instances that took part in a match (all empty when none did),
// which is what FTS5 counts for bm25.
func nearMatch(groups [][]int, widths []int, dist int) [][]int {
	out := make([][]int, len(groups))
	idx := make([]int, len(groups))
	cur := func(i int) int { return groups[i][idx[i]] }
	// lookahead is the next position of group i, or MaxInt at its end.
	lookahead := func(i int) int {
		if idx[i]+1 < len(groups[i]) {
			return groups[i][idx[i]+1]
		}
		return math.MaxInt
	}
	// advance moves group i on and reports false when it is exhausted.
	advance := func(i int) bool {
		idx[i]++
		return idx[i] < len(groups[i])
	}
	for {
		iMax := cur(0)
		for match := false; !match; {
			match = true
			for i := range groups {
				iMin := iMax - widths[i] - dist
				if p := cur(i); p < iMin || p > iMax {
					match = false
					for cur(i) < iMin {
						if !advance(i) {
							return out
						}
					}
					if p := cur(i); p > iMax {
						iMax = p
					}
				}
			}
		}
		for i := range groups {
			p := cur(i)
			if n := len(out[i]); n == 0 || out[i][n-1] != p {
				out[i] = append(out[i], p)
			}
		}
		adv, best := 0, lookahead(0)
		for i := 1; i < len(groups); i++ {
			if la := lookahead(i); la < best {
				adv, best = i, la
			}
		}
		if !advance(adv) {
			return out
		}
	}
}

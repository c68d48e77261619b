package text

// FTS5's bm25 counts, on the row it is visiting, the instances of every
// phrase whose node is positioned on that row, and a node keeps its position
// until its parent advances it. Nodes under the negative side of a NOT whose
// positive side matches no row at all are never advanced: FTS5 positions
// them on their first row and leaves them there, so they are counted on that
// row whenever the query matches it through another branch
// (`apple OR (zzz NOT delta)` counts "delta" on the first row that has it).
// Stranded computes those counts; it needs the corpus, which a Doc alone
// does not have.

// FirstFunc returns the document with the lowest id not below from, in the
// whole corpus (every indexed document, whatever a search filters), on which
// Query.Positioned reports e positioned, with its id; ok is false when there
// is none. The document must carry the positions of the tokens of every
// phrase of the query.
type FirstFunc func(e Expr, from int64) (id int64, d *Doc, ok bool, err error)

// Stranded holds phrase instances that FTS5's bm25 counts on some documents
// besides those Query.Freq reports. The zero value (nil) holds none.
type Stranded map[int64][]int

// Add adds to freq (from Query.Freq on document id) the instances stranded
// on that document.
func (s Stranded) Add(id int64, freq []int) {
	for i, n := range s[id] {
		freq[i] += n
	}
}

// Stranded returns the phrase instances that FTS5 leaves stranded on a
// document (see above). Only a query with a NOT (HasNot) can have any, and
// only then does it call first.
func (q *Query) Stranded(first FirstFunc) (Stranded, error) {
	if !q.HasNot() {
		return nil, nil
	}
	s := &stranding{q: q, first: first, out: Stranded{}}
	if err := s.walk(q.root, OpNone); err != nil {
		return nil, err
	}
	if len(s.out) == 0 {
		return nil, nil
	}
	return s.out, nil
}

type stranding struct {
	q     *Query
	first FirstFunc
	out   Stranded
}

func (s *stranding) live(n *node) (bool, error) {
	_, _, ok, err := s.first(Expr{n}, 0)
	return ok, err
}

// walk looks for NOTs with a dead positive side under n, reached from the
// root through live ANDs, ORs and NOTs: FTS5 marks the whole subtree of an
// AND or OR that matches no row at its end. Not modelled: an AND (or the
// positive side of a NOT) that runs out of rows before the document does the
// same to the stranded nodes under it, and a NOT zeroes its negative side
// then; the differential tests find no query where that shows.
func (s *stranding) walk(n *node, parent Op) error {
	switch n.kind {
	case OpOr, OpAnd:
		// FTS5 merges an AND into its parent AND, an OR into its parent OR;
		// the root needs no check (a dead root matches nothing).
		if parent != n.kind && parent != OpNone {
			if live, err := s.live(n); err != nil || !live {
				return err
			}
		}
		for _, k := range n.kids {
			if err := s.walk(k, n.kind); err != nil {
				return err
			}
		}
	case OpNot:
		live, err := s.live(n.kids[0])
		if err != nil {
			return err
		}
		if !live {
			if err := s.strand(n.kids[1], 0); err != nil {
				return err
			}
		} else if err := s.walk(n.kids[1], OpNot); err != nil {
			// a live NOT never advances a dead NOT under its negative
			// side either
			return err
		}
		return s.walk(n.kids[0], OpNot)
	}
	return nil
}

// strand records where FTS5 leaves the phrases of n after positioning n on
// its first row not below from: an OR's operands each on their own; a NOT
// on its first row, its negative side on its own first row from there when
// it is not on that row; any other node on its first row, with the
// instances that evaluating it there counts.
func (s *stranding) strand(n *node, from int64) error {
	switch n.kind {
	case OpOr:
		for _, k := range n.kids {
			if err := s.strand(k, from); err != nil {
				return err
			}
		}
		return nil
	case OpNot:
		live, err := s.live(n.kids[0])
		if err != nil {
			return err
		}
		if !live {
			return s.strand(n.kids[1], from)
		}
	}
	id, d, ok, err := s.first(Expr{n}, from)
	if err != nil || !ok {
		return err
	}
	inst := make([][]int, len(s.q.phrases))
	s.q.eval(n, d, inst)
	for i, in := range inst {
		if len(in) == 0 {
			continue
		}
		if s.out[id] == nil {
			s.out[id] = make([]int, len(s.q.phrases))
		}
		s.out[id][i] += len(in)
	}
	if n.kind == OpNot && !s.q.Positioned(Expr{n.kids[1]}, d) {
		return s.strand(n.kids[1], id)
	}
	return nil
}

// Positioned reports whether FTS5 positions e's node on the document: the
// document has every token e needs, and e's NOTs do not exclude it.
func (q *Query) Positioned(e Expr, d *Doc) bool {
	p, _ := q.eval(e.n, d, make([][]int, len(q.phrases)))
	return p
}

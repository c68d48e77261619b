package sqlite

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"encoding/binary"
	"slices"
)

// Reading a term's postings from FTS5's own records.
//
// The fts5vocab instance table hands out one row per instance, each made
// by SQLite's VDBE; for the few thousand postings a search reads that was
// most of its time. The same figures (the rows that have the term, and
// the instances in each) are in FTS5's index, which this file decodes as
// described at the top of SQLite's fts5_index.c:
//
//   - The structure record (id 10): a 4-byte cookie, an optional V2 marker
//     (ff 00 00 01), the numbers of levels and segments, a write counter,
//     then per level its segments (id, first and last leaf page; V2 adds
//     origins and tombstone counts). Level 0 is the newest; in a level the
//     last segment is the newest.
//   - The segment b-tree memories_fts_idx (segid, term, pgno<<1|flag): the
//     leaf page where a term may start is the one with the greatest term
//     not above it. Terms are stored after a byte '0' (the main index).
//   - Leaf pages, id segid<<37 + pgno: a 4-byte header (offset of the first
//     rowid on the page when it comes before the first term, else 0; offset
//     of the footer), the terms and doclists, and the footer: the offsets
//     of the terms on the page, delta-encoded. The first term on a page is
//     whole (length, bytes), the others are (shared prefix, suffix length,
//     suffix). A doclist is a rowid, then deltas; each followed by its
//     position list's size (bytes*2, plus 1 for a delete marker) and the
//     positions (a varint each; 1 announces another column). A doclist
//     ends at the next term; it may go on over pages, whose first rowid is
//     then whole, and pages with neither a rowid nor a term are skipped.
//
// A rowid in a newer segment hides the same rowid in older ones; an entry
// without positions (a delete marker) hides it and is not a posting. Any
// record that is not as described, or postings that do not add up to the
// term's document frequency, make the caller read the fts5vocab table
// instead (counted in DB.postingsFallbacks): a wrong result is never
// decoded, at worst a slow one is read.

const (
	ftsPageBits = 37 // FTS5_SEGMENT_ROWID: segid<<37 + pgno (dlidx and height 0)
	qFTSIdx     = `SELECT pgno FROM memories_fts_idx WHERE segid = ? AND term <= ? ORDER BY term DESC LIMIT 1`
	qFTSPages   = `SELECT id, block FROM memories_fts_data WHERE id >= ? AND id <= ? ORDER BY id`
)

// pruneQueries are the statements of the two-phase search that take no
// filter, prepared at Open on the read pool.
var pruneQueries = []string{qFTSIdx, qFTSPages, qDocSizes}

// maxFTSSegments bounds the segments of a structure record decoded here
// (FTS5 itself allows 2000).
const maxFTSSegments = 2000

// An ftsSegment is a segment of FTS5's index: its id and first and last
// leaf pages.
type ftsSegment struct {
	id, first, last int64
}

// ftsSegments decodes FTS5's structure record and returns its segments,
// newest first; ok is false for anything not understood here (tombstones
// among them: only contentless tables have them).
func ftsSegments(b []byte) (segs []ftsSegment, ok bool) {
	if len(b) < 4 {
		return nil, false
	}
	i, v2 := 4, false
	if len(b) >= 8 && bytes.Equal(b[4:8], []byte{0xff, 0, 0, 1}) {
		i, v2 = 8, true
	}
	bad := false
	next := func() uint64 {
		v, n := sqliteVarint(b[i:])
		if n == 0 {
			bad = true
		}
		i += n
		return v
	}
	nLevel, nSeg := next(), next()
	next() // the write counter
	if bad || nLevel > maxFTSSegments || nSeg > maxFTSSegments {
		return nil, false
	}
	levels := make([][]ftsSegment, nLevel)
	total := uint64(0)
	for l := range levels {
		merge, n := next(), next()
		if bad || n < merge || total+n > nSeg {
			return nil, false
		}
		total += n
		for range n {
			s := ftsSegment{id: int64(next()), first: int64(next()), last: int64(next())}
			if v2 {
				next() // origin1
				next() // origin2
				if tomb := next(); tomb != 0 {
					return nil, false
				}
				next() // tombstone entries
				next() // entries
			}
			if bad || s.id <= 0 || s.id >= 1<<16 || s.last < s.first || s.last >= 1<<31 {
				return nil, false
			}
			levels[l] = append(levels[l], s)
		}
	}
	if total != nSeg || i != len(b) {
		return nil, false
	}
	for _, lvl := range levels {
		for k := len(lvl) - 1; k >= 0; k-- {
			if lvl[k].first > 0 { // 0: every page merged away
				segs = append(segs, lvl[k])
			}
		}
	}
	return segs, true
}

// A posting is a row that has a term, with its instances in that row.
type posting struct {
	id   int64
	freq int32 // 0: a delete marker
}

// ftsReader reads terms' postings from FTS5's index records in tx.
type ftsReader struct {
	d     *DB
	ctx   context.Context
	idx   *sql.Stmt // qFTSIdx
	pages *sql.Stmt // qFTSPages
	segs  []ftsSegment
	key   []byte
	term  []byte // the current term on a page
}

// postings returns the rows that have term (a stem), in rowid order, with
// its instances in each. ok is false when the records are not as expected:
// the caller reads them another way.
func (f *ftsReader) postings(term string, df int64) (_ []posting, ok bool, err error) {
	f.key = append(append(f.key[:0], '0'), term...)
	var out []posting
	for k, s := range f.segs {
		list, ok, err := f.segment(s)
		if err != nil || !ok {
			return nil, ok, err
		}
		if k == 0 {
			out = list
		} else if len(list) > 0 {
			out = mergeNewer(out, list)
		}
	}
	out = slices.DeleteFunc(out, func(p posting) bool { return p.freq == 0 })
	if int64(len(out)) != df {
		return nil, false, nil
	}
	return out, true, nil
}

// mergeNewer merges the postings of an older segment into newer's, both
// in rowid order: newer's entry wins for a rowid in both.
func mergeNewer(newer, older []posting) []posting {
	out := make([]posting, 0, len(newer)+len(older))
	i, j := 0, 0
	for i < len(newer) && j < len(older) {
		switch c := cmp.Compare(newer[i].id, older[j].id); {
		case c < 0:
			out = append(out, newer[i])
			i++
		case c > 0:
			out = append(out, older[j])
			j++
		default:
			out = append(out, newer[i])
			i++
			j++
		}
	}
	out = append(out, newer[i:]...)
	return append(out, older[j:]...)
}

// segment returns the postings of f.key in segment s, delete markers
// included (freq 0).
func (f *ftsReader) segment(s ftsSegment) (list []posting, ok bool, err error) {
	pg := s.first
	var v int64
	switch err := f.idx.QueryRowContext(f.ctx, s.id, f.key).Scan(&v); err {
	case nil:
		pg = max(v>>1, s.first)
	case sql.ErrNoRows:
	default:
		return nil, false, err
	}
	if pg > s.last {
		return nil, false, nil
	}
	rows, err := f.pages.QueryContext(f.ctx, s.id<<ftsPageBits+pg, s.id<<ftsPageBits+s.last)
	if err != nil {
		return nil, false, err
	}
	defer rows.Close()
	var d doclist
	for want := s.id<<ftsPageBits + pg; rows.Next(); want++ {
		var id int64
		var raw sql.RawBytes
		if err := rows.Scan(&id, &raw); err != nil {
			return nil, false, err
		}
		page := []byte(raw)
		if f.d.ftsTamper != nil {
			page = f.d.ftsTamper(id, bytes.Clone(page))
		}
		if id != want {
			return nil, false, nil // a missing page
		}
		var more bool
		if want == s.id<<ftsPageBits+pg {
			more, ok = d.first(f, page)
		} else {
			more, ok = d.next(page)
		}
		if !ok {
			return nil, false, nil
		}
		if !more {
			return d.list, true, rows.Err()
		}
	}
	if err := rows.Err(); err != nil {
		return nil, false, err
	}
	// The segment ended: so does the doclist, unless a position list was
	// cut short.
	return d.list, d.rest == 0, nil
}

// A doclist is the state of decoding one term's doclist over pages.
type doclist struct {
	list []posting
	rest int // bytes of the current entry's position list on later pages
}

// leaf splits a leaf page into its content (up to the footer) and footer.
func leaf(page []byte) (content, footer []byte, ok bool) {
	if len(page) < 4 {
		return nil, nil, false
	}
	sz := int(binary.BigEndian.Uint16(page[2:4]))
	if sz < 4 || sz > len(page) {
		return nil, nil, false
	}
	return page[:sz], page[sz:], true
}

// first finds f.key on the page where the index says it may start and
// decodes its doclist there. more says the doclist may go on.
func (d *doclist) first(f *ftsReader, page []byte) (more, ok bool) {
	content, footer, ok := leaf(page)
	if !ok {
		return false, false
	}
	off := 0
	for n := 0; len(footer) > 0; n++ {
		delta, m := sqliteVarint(footer)
		if m == 0 {
			return false, false
		}
		footer = footer[m:]
		off += int(delta)
		if off < 4 || off >= len(content) {
			return false, false
		}
		p := off
		var prefix uint64
		if n > 0 {
			if prefix, m = sqliteVarint(content[p:]); m == 0 || prefix > uint64(len(f.term)) {
				return false, false
			}
			p += m
		}
		suffix, m := sqliteVarint(content[p:])
		if m == 0 || suffix > uint64(len(content)-p-m) {
			return false, false
		}
		p += m
		f.term = append(f.term[:prefix], content[p:p+int(suffix)]...)
		p += int(suffix)
		switch c := bytes.Compare(f.term, f.key); {
		case c > 0:
			return false, true // the term is not in this segment
		case c == 0:
			end := len(content)
			if len(footer) > 0 {
				delta, m := sqliteVarint(footer)
				if m == 0 || off+int(delta) > len(content) || off+int(delta) < p {
					return false, false
				}
				end = off + int(delta)
			}
			return d.entries(content[:end], p, end == len(content))
		}
	}
	return false, true // after every term on the page: not in this segment
}

// next decodes a later page of a doclist. more says it may go on.
func (d *doclist) next(page []byte) (more, ok bool) {
	content, footer, ok := leaf(page)
	if !ok {
		return false, false
	}
	end := len(content)
	if len(footer) > 0 {
		first, m := sqliteVarint(footer)
		if m == 0 || first < 4 || first > uint64(len(content)) {
			return false, false
		}
		end = int(first)
	}
	p := 4
	if d.rest > 0 {
		n := min(d.rest, end-p)
		f, ok := positions(content[p : p+n])
		if !ok {
			return false, false
		}
		d.list[len(d.list)-1].freq += f
		d.rest -= n
		p += n
		if d.rest > 0 {
			return end == len(content), end == len(content)
		}
	}
	rowid := int(binary.BigEndian.Uint16(page[0:2]))
	if rowid != 0 && rowid < len(content) {
		if rowid != p {
			return false, false
		}
		return d.entries(content[:end], p, end == len(content))
	}
	if p != end {
		return false, false
	}
	// No rowid: a page with a term ends the doclist, one without is skipped.
	return len(footer) == 0, true
}

// entries decodes doclist entries from b[p:] to its end, the first rowid
// whole. open says b ends where the page's content does, so the doclist
// may go on (more).
func (d *doclist) entries(b []byte, p int, open bool) (more, ok bool) {
	var rowid int64
	abs := true
	for p < len(b) {
		v, m := sqliteVarint(b[p:])
		if m == 0 {
			return false, false
		}
		p += m
		if abs {
			rowid, abs = int64(v), false
		} else {
			if v == 0 {
				return false, false
			}
			rowid += int64(v)
		}
		if n := len(d.list); n > 0 && rowid <= d.list[n-1].id {
			return false, false
		}
		sz, m := sqliteVarint(b[p:])
		if m == 0 {
			return false, false
		}
		p += m
		size := int(sz >> 1)
		n := min(size, len(b)-p)
		f, ok := positions(b[p : p+n])
		if !ok {
			return false, false
		}
		p += n
		d.list = append(d.list, posting{id: rowid, freq: f})
		if d.rest = size - n; d.rest > 0 && !open {
			return false, false
		}
	}
	return open, true
}

// positions counts the positions in b, part of a position list: a varint
// each, 1 followed by a column number announcing another column.
func positions(b []byte) (int32, bool) {
	var n int32
	for p := 0; p < len(b); {
		v, m := sqliteVarint(b[p:])
		if m == 0 {
			return 0, false
		}
		p += m
		if v == 1 {
			if _, m = sqliteVarint(b[p:]); m == 0 {
				return 0, false
			}
			p += m
			continue
		}
		n++
	}
	return n, true
}

// newFTSReader returns a reader of the index whose structure record is
// structure, nil (counted as fallbacks when read) when that record is not
// understood here.
func (d *DB) newFTSReader(ctx context.Context, tx *sql.Tx, structure []byte) *ftsReader {
	if d.ftsTamper != nil {
		structure = d.ftsTamper(ftsStructureID, bytes.Clone(structure))
	}
	segs, ok := ftsSegments(structure)
	if !ok {
		return nil
	}
	return &ftsReader{d: d, ctx: ctx, idx: tx.StmtContext(ctx, d.rStmts[qFTSIdx]), pages: tx.StmtContext(ctx, d.rStmts[qFTSPages]), segs: segs}
}

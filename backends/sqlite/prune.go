package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/bits"
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/query"
	"github.com/memos-go/memos/core/text"
)

// Keyword top-k without scoring every match.
//
// A natural-language question becomes an OR of its content words, and FTS5
// computes bm25 for every row that matches any of them: at 100k memories a
// question with a few common words matches tens of thousands of rows. An
// OR of plain terms and phrases (no prefix, NOT, AND or NEAR) whose
// matches exceed keyword_prune_rows is instead evaluated in two phases:
//
//  1. The phrases are ordered by document frequency (df, from the
//     fts5vocab table memories_fts_vocab; a phrase of several tokens is
//     counted by FTS5), rarest first. The rarest ones, as many as keep the
//     sum of their df within keyword_prune_rows, give the candidates: the
//     rows that match any of them (FTS5 iterates their doclists without
//     scoring).
//  2. Each candidate's content is tokenized here, and its bm25 over ALL the
//     query's phrases is computed with FTS5's formula and FTS5's figures:
//     the row and token counts of the index (its averages record), each
//     phrase's idf computed by SQLite's own ln() from the df, the row's
//     token count. The scores are bit-identical to FTS5's bm25().
//
// A row that is not a candidate contains none of the rare phrases, so its
// score is below the sum, over the common phrases, of idf·(k1+1) (the
// limit of a phrase's bm25 term as its frequency grows). When the limit-th
// best candidate that passes the filter scores above that bound, the result
// is provably the one FTS5 returns (same rows, order and scores). Otherwise
// it is the best limit of the candidates: an approximation, whose effect
// on recall is measured (README, Keyword search). When fewer than limit
// candidates pass the filter, FTS5 answers. keyword_prune_rows -1 turns the
// two phases off.
//
// Document frequencies are cached until the index changes: the cache is
// keyed by FTS5's structure and averages records, which every write to
// the index changes.

// DefaultKeywordPruneRows is the default of Config.KeywordPruneRows.
const DefaultKeywordPruneRows = text.DefaultPruneRows

// FTS5's shadow records read by the two-phase search: the averages record
// (rows and tokens of the index) and the structure record (its segments).
const (
	ftsAveragesID  = 1
	ftsStructureID = 10
)

const (
	qFTSRecord = `SELECT block FROM memories_fts_data WHERE id = ?`
	qVocabDF   = `SELECT doc FROM memories_fts_vocab WHERE term = ?`
	qPhraseDF  = `SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?`
	// qIDF computes FTS5's idf, log((N - n + 0.5) / (n + 0.5)), with the
	// same C log() FTS5 calls, for a JSON array of document frequencies.
	qIDF        = `SELECT ln((? - value + 0.5) / (value + 0.5)) FROM json_each(?) ORDER BY key`
	qCandidates = `SELECT m.id, m.content FROM memories_fts
		CROSS JOIN memories AS m ON m.id = memories_fts.rowid
		WHERE memories_fts MATCH ?`
)

// prunePhrase is one phrase of a query evaluated in two phases.
type prunePhrase struct {
	node  query.Node // the Term or Phrase
	stems []string   // its tokens as the index stores them
	df    int64
	idf   float64
}

// prunable returns the phrases of q when q is an OR of at least two plain
// terms and phrases, the shape query.Natural builds; nil otherwise.
func prunable(q query.Node) []*prunePhrase {
	or, ok := q.(*query.Or)
	if !ok || len(or.Children) < 2 {
		return nil
	}
	out := make([]*prunePhrase, 0, len(or.Children))
	for _, c := range or.Children {
		var toks []string
		switch c := c.(type) {
		case *query.Term:
			if c == nil || c.Prefix {
				return nil
			}
			toks = []string{c.Text}
		case *query.Phrase:
			if c == nil || len(c.Terms) == 0 {
				return nil
			}
			toks = c.Terms
		default:
			return nil
		}
		p := &prunePhrase{node: c, stems: make([]string, len(toks))}
		for i, t := range toks {
			p.stems[i] = text.Stem(t)
		}
		out = append(out, p)
	}
	return out
}

// pruneCache holds what the two-phase search reuses between searches: the
// document frequencies of the index whose structure and averages records
// are key, and porter stems of content tokens.
type pruneCache struct {
	mu    sync.RWMutex
	key   []byte
	df    map[string]int64 // by phrase text (query.Node.String)
	stems map[string]string
}

const (
	maxCachedDF    = 1 << 16
	maxCachedStems = 1 << 17
)

// pruneOutcome says how a search was answered, for tests.
type pruneOutcome int

const (
	pruneNotTried pruneOutcome = iota // the query does not have the shape
	pruneExact                        // FTS5 answered (few matches, or no rare phrase)
	pruneProved                       // two phases, result proved equal to FTS5's
	pruneApprox                       // two phases, best of the candidates
)

// searchPruned answers a keyword search in two phases (see above), and
// says how; outcome pruneExact (with no hits) means FTS5 should answer.
func (d *DB) searchPruned(ctx context.Context, phrases []*prunePhrase, where string, fargs []any, limit int) (hits []driver.Hit, outcome pruneOutcome, err error) {
	tx, err := d.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, pruneExact, err
	}
	defer tx.Rollback()

	// The index's figures, and whether the cached dfs are still its own.
	var avg, structure []byte
	if err := tx.QueryRowContext(ctx, qFTSRecord, ftsAveragesID).Scan(&avg); err != nil {
		if err == sql.ErrNoRows {
			return nil, pruneExact, nil // an empty index: FTS5 answers at once
		}
		return nil, pruneExact, err
	}
	if err := tx.QueryRowContext(ctx, qFTSRecord, ftsStructureID).Scan(&structure); err != nil {
		if err == sql.ErrNoRows {
			return nil, pruneExact, nil
		}
		return nil, pruneExact, err
	}
	corpus, ok := decodeAverages(avg)
	if !ok || corpus.Docs == 0 || corpus.Tokens == 0 {
		return nil, pruneExact, nil
	}
	if err := d.phraseDFs(ctx, tx, phrases, append(structure[:len(structure):len(structure)], avg...)); err != nil {
		return nil, pruneExact, err
	}

	// The rarest phrases within the row budget give the candidates
	// (text.PlanPrune); few matches, or every phrase common: FTS5 answers.
	dfs := make([]int64, len(phrases))
	for i, p := range phrases {
		dfs[i] = p.df
	}
	plan, ok := text.PlanPrune(dfs, d.pruneRows)
	if !ok {
		return nil, pruneExact, nil
	}

	// idf of every phrase, by SQLite's ln().
	dfJSON, _ := json.Marshal(dfs)
	rows, err := tx.QueryContext(ctx, qIDF, int64(corpus.Docs), string(dfJSON))
	if err != nil {
		return nil, pruneExact, err
	}
	i := 0
	for rows.Next() {
		var v sql.NullFloat64
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return nil, pruneExact, err
		}
		if !v.Valid { // ln() of a value that is not positive: cannot happen
			rows.Close()
			return nil, pruneExact, nil
		}
		if i < len(phrases) {
			if v.Float64 <= 0 {
				v.Float64 = 1e-6 // as FTS5
			}
			phrases[i].idf = v.Float64
		}
		i++
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, pruneExact, err
	}
	if i != len(phrases) {
		return nil, pruneExact, fmt.Errorf("idf: %d values for %d phrases", i, len(phrases))
	}
	// Phase 1: the candidates; phase 2: their exact scores.
	kids := make([]query.Node, len(plan.Rare))
	for i, j := range plan.Rare {
		kids[i] = phrases[j].node
	}
	var expr string
	if len(kids) == 1 {
		expr = kids[0].String()
	} else {
		expr = (&query.Or{Children: kids}).String()
	}
	crows, err := tx.QueryContext(ctx, qCandidates, expr)
	if err != nil {
		return nil, pruneExact, err
	}
	sc := d.newScorer(phrases)
	idf := make([]float64, len(phrases))
	for i, p := range phrases {
		idf[i] = p.idf
	}
	// One goroutine reads the candidates' content while this one scores
	// them: reading (the store's pages) and tokenizing take about as long.
	batches := make(chan *rowBatch, 4)
	readErr := make(chan error, 1)
	stop := make(chan struct{})
	go func() {
		defer close(batches)
		readErr <- readCandidates(crows, batches, stop)
	}()
	freq := make([]int, len(phrases))
	var size int64 // the candidates' number, at most
	for _, j := range plan.Rare {
		size += dfs[j]
	}
	ranked := make([]driver.Hit, 0, size)
	complete := true
	d.prune.mu.RLock()
	for b := range batches {
		if !complete {
			continue // draining after stop
		}
		start := 0
		for i, id := range b.ids {
			dl, ok := sc.count(b.text[start:b.ends[i]], freq)
			if !ok {
				complete = false
				close(stop)
				break
			}
			start = b.ends[i]
			ranked = append(ranked, driver.Hit{ID: id, Score: corpus.Score(freq, idf, dl)})
		}
	}
	d.prune.mu.RUnlock()
	err = <-readErr
	crows.Close()
	if err != nil {
		return nil, pruneExact, err
	}
	if !complete {
		return nil, pruneExact, nil // FTS5 answers
	}
	sc.keepStems(d)
	slices.SortFunc(ranked, func(a, b driver.Hit) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
	if where != "" {
		if ranked, err = d.passing(ctx, tx, ranked, where, fargs, limit); err != nil {
			return nil, pruneExact, err
		}
	}
	if len(ranked) < limit {
		// Fewer candidates pass than were asked for: rows that are not
		// candidates would fill the rest. FTS5 answers.
		return nil, pruneExact, nil
	}
	ranked = ranked[:limit]
	outcome = pruneApprox
	if ranked[limit-1].Score > plan.Bound(idf) {
		outcome = pruneProved
	}
	return ranked, outcome, nil
}

// A rowBatch is candidates read by readCandidates: ids[i]'s content is
// text[ends[i-1]:ends[i]].
type rowBatch struct {
	ids  []int64
	ends []int
	text []byte
}

const rowBatchSize = 64

// readCandidates sends the rows (id, content) of rows to out in batches,
// until they end or stop is closed.
func readCandidates(rows *sql.Rows, out chan<- *rowBatch, stop <-chan struct{}) error {
	b := &rowBatch{}
	send := func() bool {
		select {
		case out <- b:
			b = &rowBatch{text: make([]byte, 0, cap(b.text))}
			return true
		case <-stop:
			return false
		}
	}
	for rows.Next() {
		var id int64
		var content sql.RawBytes
		if err := rows.Scan(&id, &content); err != nil {
			return err
		}
		b.ids = append(b.ids, id)
		b.text = append(b.text, content...)
		b.ends = append(b.ends, len(b.text))
		if len(b.ids) == rowBatchSize && !send() {
			return nil
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(b.ids) > 0 {
		send()
	}
	return nil
}

// passing returns, in order, the hits of ranked that pass the filter
// clause where, at least limit of them when there are that many: it checks
// the best unfilteredRows(limit) first and the rest only when too few of
// those pass.
func (d *DB) passing(ctx context.Context, tx *sql.Tx, ranked []driver.Hit, where string, fargs []any, limit int) ([]driver.Hit, error) {
	pass, temporary, err := d.searchStmt(ctx, fmt.Sprintf(qPass, where))
	if err != nil {
		return nil, err
	}
	if temporary {
		defer pass.Close()
	}
	st := tx.StmtContext(ctx, pass)
	out := make([]driver.Hit, 0, limit)
	for rest := ranked; len(rest) > 0 && len(out) < limit; {
		n := unfilteredRows(limit)
		if len(out) > 0 || n > len(rest) {
			n = len(rest) // the second round checks the rest at once
		}
		chunk := rest[:n]
		rest = rest[n:]
		rows, err := st.QueryContext(ctx, append([]any{jsonIDs(chunk, hitID)}, fargs...)...)
		if err != nil {
			return nil, err
		}
		passed := make(map[int64]bool, len(chunk))
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, err
			}
			passed[id] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		for _, h := range chunk {
			if passed[h.ID] {
				out = append(out, h)
			}
		}
	}
	return out, nil
}

// phraseDFs sets the document frequency of each phrase: from the cache
// when key (the index's structure and averages records) is the one it was
// filled under, else from the fts5vocab table (a term) or by FTS5 (a phrase
// of several tokens).
func (d *DB) phraseDFs(ctx context.Context, tx *sql.Tx, phrases []*prunePhrase, key []byte) error {
	c := &d.prune
	c.mu.RLock()
	fresh := bytes.Equal(c.key, key)
	missing := false
	for _, p := range phrases {
		df, ok := int64(0), false
		if fresh {
			df, ok = c.df[p.node.String()]
		}
		if ok {
			p.df = df
		} else {
			p.df = -1
			missing = true
		}
	}
	c.mu.RUnlock()
	if !missing {
		return nil
	}
	for _, p := range phrases {
		if p.df >= 0 {
			continue
		}
		var err error
		if len(p.stems) == 1 {
			err = tx.QueryRowContext(ctx, qVocabDF, p.stems[0]).Scan(&p.df)
			if err == sql.ErrNoRows {
				p.df, err = 0, nil
			}
		} else {
			err = tx.QueryRowContext(ctx, qPhraseDF, p.node.String()).Scan(&p.df)
		}
		if err != nil {
			return fmt.Errorf("document frequency of %s: %w", p.node, err)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !bytes.Equal(c.key, key) {
		c.key = bytes.Clone(key)
		c.df = make(map[string]int64)
	}
	if len(c.df) >= maxCachedDF {
		clear(c.df)
	}
	for _, p := range phrases {
		c.df[p.node.String()] = p.df
	}
	return nil
}

// decodeAverages reads FTS5's averages record: the number of rows, then
// the number of tokens of each column (one here), as SQLite varints.
func decodeAverages(b []byte) (text.Corpus, bool) {
	rows, n := sqliteVarint(b)
	if n == 0 {
		return text.Corpus{}, false
	}
	toks, m := sqliteVarint(b[n:])
	if m == 0 {
		return text.Corpus{}, false
	}
	return text.Corpus{Docs: rows, Tokens: toks}, true
}

// sqliteVarint decodes an SQLite varint (big-endian, 7 bits a byte, the
// ninth byte whole) and returns it with its length, 0 if b is too short.
func sqliteVarint(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < 9 && i < len(b); i++ {
		if i == 8 {
			return v<<8 | uint64(b[i]), 9
		}
		v = v<<7 | uint64(b[i]&0x7f)
		if b[i] < 0x80 {
			return v, i + 1
		}
	}
	return 0, 0
}

// A scorer counts, in a row's content, its tokens and the instances of
// each phrase of a query, the way FTS5's tokenizer (porter unicode61
// remove_diacritics 2) and bm25 count them. It stems only the tokens that
// can have a query token's stem (see text.MayStemTo).
type scorer struct {
	phrases [][]int    // each phrase's tokens as slots
	stems   []string   // by slot
	byFirst [256][]int // slots by the first byte of their stem
	first   [256]bool  // bytes that start a stem, in either case
	pos     [][]int    // per slot, its positions in the current row
	cache   map[string]string
	newStem map[string]string // stems computed in this search
	buf     []byte
}

func (d *DB) newScorer(phrases []*prunePhrase) *scorer {
	s := &scorer{cache: d.prune.stems, newStem: map[string]string{}}
	slot := map[string]int{}
	for _, p := range phrases {
		slots := make([]int, len(p.stems))
		for i, t := range p.stems {
			k, ok := slot[t]
			if !ok {
				k = len(s.stems)
				slot[t] = k
				s.stems = append(s.stems, t)
				if t != "" {
					s.byFirst[t[0]] = append(s.byFirst[t[0]], k)
					s.first[t[0]] = true
					if 'a' <= t[0] && t[0] <= 'z' {
						s.first[t[0]-('a'-'A')] = true
					}
				}
			}
			slots[i] = k
		}
		s.phrases = append(s.phrases, slots)
	}
	s.pos = make([][]int, len(s.stems))
	return s
}

// stem returns the porter stem of the lower-case token t. It runs with
// d.prune.mu read-locked (s.cache is the shared cache).
func (s *scorer) stem(t []byte) string {
	if st, ok := s.cache[string(t)]; ok {
		return st
	}
	if st, ok := s.newStem[string(t)]; ok {
		return st
	}
	tok := string(t)
	st := text.Stem(tok)
	s.newStem[tok] = st
	return st
}

// keepStems adds the stems computed in this search to the shared cache.
func (s *scorer) keepStems(d *DB) {
	if len(s.newStem) == 0 {
		return
	}
	d.prune.mu.Lock()
	defer d.prune.mu.Unlock()
	if d.prune.stems == nil || len(d.prune.stems)+len(s.newStem) > maxCachedStems {
		d.prune.stems = make(map[string]string, len(s.newStem))
	}
	for t, st := range s.newStem {
		d.prune.stems[t] = st
	}
}

// see records the token t (lower case, not empty) at position i.
func (s *scorer) see(t []byte, i int) {
	slots := s.byFirst[t[0]]
	for j, k := range slots {
		if !text.MayStemTo(t, s.stems[k]) {
			continue
		}
		st := s.stem(t)
		for _, k := range slots[j:] {
			if s.stems[k] == st {
				s.pos[k] = append(s.pos[k], i)
				return
			}
		}
		return
	}
}

// asciiClass classifies bytes: 0 separates tokens, 1 is a lower-case
// letter or digit, 2 an upper-case letter, 3 starts or continues a
// multi-byte character. FTS5's unicode61 tokenizer keeps ASCII letters and
// digits and folds them to lower case.
var asciiClass = func() (c [256]byte) {
	for b := range 256 {
		switch {
		case 'a' <= b && b <= 'z' || '0' <= b && b <= '9':
			c[b] = 1
		case 'A' <= b && b <= 'Z':
			c[b] = 2
		case b >= utf8.RuneSelf:
			c[b] = 3
		}
	}
	return c
}()

// count sets freq[i] to the instances of phrase i in content and returns
// its number of tokens. ok is false when content is not valid UTF-8 (FTS5
// and Go decode such bytes differently) or a character could not be
// classified.
func (s *scorer) count(content []byte, freq []int) (n int, ok bool) {
	for k := range s.pos {
		s.pos[k] = s.pos[k][:0]
	}
	if n, ok = s.tokens(content); !ok {
		return 0, false
	}
	for i, slots := range s.phrases {
		first := s.pos[slots[0]]
		if len(slots) == 1 {
			freq[i] = len(first)
			continue
		}
		f := 0
	starts:
		for _, p := range first {
			for j, k := range slots[1:] {
				if _, ok := slices.BinarySearch(s.pos[k], p+j+1); !ok {
					continue starts
				}
			}
			f++
		}
		freq[i] = f
	}
	return n, true
}

// isASCII reports whether b has no byte above 0x7f, eight bytes at a time.
func isASCII(b []byte) bool {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		if binary.LittleEndian.Uint64(b[i:])&0x8080808080808080 != 0 {
			return false
		}
	}
	for ; i < len(b); i++ {
		if b[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// lowerASCII maps an ASCII letter to lower case and any other byte to itself.
var lowerASCII = func() (l [256]byte) {
	for b := range 256 {
		l[b] = byte(b)
		if 'A' <= b && b <= 'Z' {
			l[b] = byte(b) + ('a' - 'A')
		}
	}
	return l
}()

// tokensASCII is tokens for ASCII content. It finds the tokens' starts
// eight bytes at a time (alnumMask) and looks at a token's bytes only when
// its first byte starts a query token's stem.
func (s *scorer) tokensASCII(content []byte) int {
	n := 0
	var prev uint64 // 0x80 when the byte before the current word is alphanumeric
	var tail [8]byte
	for i := 0; i < len(content); i += 8 {
		var w uint64
		if i+8 <= len(content) {
			w = binary.LittleEndian.Uint64(content[i:])
		} else {
			tail = [8]byte{}
			copy(tail[:], content[i:])
			w = binary.LittleEndian.Uint64(tail[:])
		}
		a := alnumMask(w)
		starts := a &^ (a<<8 | prev)
		prev = a >> 56
		for starts != 0 {
			at := i + bits.TrailingZeros64(starts)>>3
			starts &= starts - 1
			if s.first[content[at]] {
				end, upper := at, false
				for ; end < len(content) && asciiClass[content[end]] != 0; end++ {
					upper = upper || asciiClass[content[end]] == 2
				}
				t := content[at:end]
				if upper {
					buf := s.buf[:0]
					for _, c := range t {
						buf = append(buf, lowerASCII[c])
					}
					s.buf, t = buf, buf
				}
				s.see(t, n)
			}
			n++
		}
	}
	return n
}

// alnumMask returns, for eight ASCII bytes, 0x80 in each byte that is a
// letter or digit and 0 in the others. For a byte x below 0x80, x + 0x80 -
// lo has its top bit set exactly when x >= lo, and never carries into the
// next byte.
func alnumMask(w uint64) uint64 {
	const ones, high = 0x0101010101010101, 0x8080808080808080
	ge := func(w uint64, lo uint64) uint64 { return (w + ones*(0x80-lo)) & high }
	le := func(w uint64, hi uint64) uint64 { return ^(w + ones*(0x7f-hi)) & high }
	low := w | ones*0x20 // upper-case letters to lower case, and no others into a..z
	return ge(w, '0')&le(w, '9') | ge(low, 'a')&le(low, 'z')
}

// tokens records the tokens of content that may have a query token's stem
// and returns the number of tokens, as FTS5's tokenizer (porter unicode61
// remove_diacritics 2) splits and folds them: ASCII by asciiClass, other
// characters as FTS5 classifies them (text.Fold).
func (s *scorer) tokens(content []byte) (int, bool) {
	if isASCII(content) {
		return s.tokensASCII(content), true
	}
	n := 0
	for i := 0; i < len(content); {
		start, copied := i, false
		buf := s.buf[:0]
	token:
		for i < len(content) {
			c := content[i]
			switch asciiClass[c] {
			case 1:
				if copied {
					buf = append(buf, c)
				}
				i++
			case 2:
				if !copied {
					buf, copied = append(buf, content[start:i]...), true
				}
				buf = append(buf, c+('a'-'A'))
				i++
			case 3:
				r, size := utf8.DecodeRune(content[i:])
				if r == utf8.RuneError && size == 1 {
					return 0, false
				}
				f, token := text.Fold(r)
				if !token {
					if i == start {
						i += size
						start = i
						continue
					}
					break token
				}
				if !copied {
					buf, copied = append(buf, content[start:i]...), true
				}
				if f >= 0 {
					buf = utf8.AppendRune(buf, f)
				}
				i += size
			default:
				if i == start {
					i++
					start = i
					continue
				}
				break token
			}
		}
		if i == start {
			continue
		}
		t := content[start:i]
		if copied {
			t = buf
			s.buf = buf
		}
		if len(t) == 0 {
			continue // only characters that fold to nothing: no token
		}
		if len(s.byFirst[t[0]]) > 0 {
			s.see(t, n)
		}
		n++
	}
	return n, true
}

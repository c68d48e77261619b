package sqlite

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/query"
	"github.com/memos-go/memos/core/text"
)

// Keyword top-k without scoring every match, reading only what may rank.
//
// A natural-language question becomes an OR of its content words, and FTS5
// computes bm25 for every row that matches any of them: at 100k memories a
// question with a few common words matches tens of thousands of rows. An
// OR of plain terms and phrases (no prefix, NOT, AND or NEAR) whose
// matches exceed keyword_prune_rows is instead answered from the index's
// postings, MaxScore-style:
//
//  1. The phrases are ordered by document frequency (df, from the
//     fts5vocab table memories_fts_vocab; a phrase of several tokens is
//     counted by FTS5), rarest first. The rarest ones, as many as keep the
//     sum of their df within keyword_prune_rows, are the rare phrases
//     (text.PlanPrune); their rows are the candidates. A rare term's
//     postings (the rows that have it, with its frequency in each) are
//     decoded from FTS5's own records (fts5read.go), or read from the
//     fts5vocab instance table memories_fts_instance when those are not as
//     expected; a rare phrase of several tokens gives the rows FTS5
//     matches (frequency at least one, not known).
//  2. Each candidate's score is bounded from what is known: for each rare
//     phrase it has, text.Corpus.Term of its frequency (or the phrase's
//     bound when not known), and for each common phrase its bound. A
//     phrase's bound is the largest it adds to any row: from the frontiers
//     of its terms stored beside the index (bound.go), or MaxTerm, the
//     limit of a phrase's bm25 term as its frequency grows. Term shrinks
//     as the row grows, so the bound holds with the length 0 until the
//     row's length is read.
//  3. The candidates are taken best bound first, in batches: their lengths
//     are read from FTS5's docsize table (a few bytes a row), which
//     tightens their bounds; those whose bound still reaches the limit-th
//     best score so far have their content read (with the filter) and are
//     scored exactly by tokenizing it here, with FTS5's formula and FTS5's
//     figures: the row and token counts of the index (its averages
//     record), each phrase's idf computed by SQLite's own ln() from the df,
//     the row's token count. Those scores are bit-identical to FTS5's
//     bm25(). The batches stop at the first candidate whose bound is below
//     the limit-th score: no later one can rank (a tie would need an equal
//     score).
//  4. A row that is not a candidate contains only common phrases, so its
//     score is below the sum of their bounds. When the limit-th score is
//     above that, the result is provably FTS5's (same rows, order and
//     scores). Otherwise the rarest common phrase becomes rare, its
//     postings add candidates, and steps 2-4 run again on the candidates
//     not yet decided; when every phrase is rare every matching row is a
//     candidate and the result is exact whatever the scores.
//  5. An instance costs a fraction of a content read and its tokenizing,
//     so a common phrase with at most pruneEagerShare times as many rows as
//     there are candidates joins the rare ones before any content is read.
//     And a round of step 3 reads at most the next common phrase's rows
//     divided by pruneContentShare contents: when more candidates would
//     need theirs (each bound carries the common phrases' bounds, so with
//     common words nearly all of them do), it stops, that phrase becomes
//     rare and the round goes on with the candidates not yet decided.
//     At 100k turns (top 30, filtered) this took the contents a search
//     reads from 542 to 168, and the most any search read from 15,505
//     to 1,816.
//     Once every phrase's postings are read, a candidate whose phrases are
//     all terms has its score computed from its frequencies and length,
//     without its content (the filter is checked on the memories_scope
//     index).
//
// So a search reads the postings of the phrases it needs and, of the rows,
// only the lengths of the likely ones and the contents of those that may
// rank. Beside FTS5's index only the terms' frontiers are stored, kept in
// the transaction of every write and never lower than the rows left (see
// bound.go); everything else comes from the index itself (document
// frequencies, instances, docsize). When the
// postings the search would read exceed pruneScanShare times
// keyword_prune_rows, or a content cannot be tokenized here (invalid
// UTF-8), FTS5 answers. keyword_prune_rows -1 turns the two phases off.
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
	qIDF = `SELECT ln((? - value + 0.5) / (value + 0.5)) FROM json_each(?) ORDER BY key`
	// The postings of a term (one id per instance) and of a phrase of
	// several tokens (one id per row that has it), as one text of
	// comma-separated ids: aggregated inside SQLite, a posting costs a
	// fraction of a result row handed to Go (at 100k memories a search reads
	// about 20,000 of them; one row each was half of its time).
	qTermPostings   = `SELECT group_concat(doc) FROM memories_fts_instance WHERE term = ?`
	qPhrasePostings = `SELECT group_concat(rowid) FROM memories_fts WHERE memories_fts MATCH ?`
	// The number of tokens of rows (a JSON array of ids): FTS5's docsize
	// record, one varint per column.
	qDocSizes = `SELECT id, sz FROM memories_fts_docsize WHERE id IN (SELECT value FROM json_each(?))`
	// The contents of rows (a JSON array of ids) that pass a filter (%s).
	qCandidates = `SELECT m.id, m.content FROM memories AS m WHERE m.id IN (SELECT value FROM json_each(?))%s`
)

// prunePhrase is one phrase of a query evaluated in two phases.
type prunePhrase struct {
	node  query.Node // the Term or Phrase
	stems []string   // its tokens as the index stores them
	df    int64
	idf   float64
	// max bounds what the phrase adds to any row's score: its terms'
	// stored frontiers' bound (bound.go), or MaxTerm.
	max float64
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
// document frequencies and row lengths of the index whose structure and
// averages records are key, and porter stems of content tokens. Every
// write to the index changes its structure record (FTS5 counts its
// writes there), in this process or another, so a search that sees a new
// key drops what the old one held.
type pruneCache struct {
	mu  sync.RWMutex
	key []byte
	df  map[string]int64 // by phrase text (query.Node.String)
	// lengths holds the number of tokens of rows read from the docsize
	// table, by id.
	lengths map[int64]int32
	// The stored frontiers (bound.go) by term, nil when the term has none,
	// and whether rows were pending (then no frontier is used), under key.
	bounds  map[string]text.Frontier
	pending int // 0 unknown, 1 no, 2 yes
	stems   map[string]string
}

const (
	maxCachedDF      = 1 << 16
	maxCachedStems   = 1 << 17
	maxCachedLengths = 1 << 20 // about 40 MB when full
)

// pruneOutcome says how a search was answered, for tests.
type pruneOutcome int

const (
	pruneNotTried pruneOutcome = iota // the query does not have the shape
	pruneExact                        // FTS5 answered (few matches, or no rare phrase)
	pruneProved                       // two phases, result proved equal to FTS5's
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
	key := append(structure[:len(structure):len(structure)], avg...)
	if err := d.phraseDFs(ctx, tx, phrases, key); err != nil {
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
	if err := d.phraseBounds(ctx, tx, phrases, corpus, key); err != nil {
		return nil, pruneExact, err
	}
	return d.rankPruned(ctx, tx, phrases, plan, corpus, structure, key, where, fargs, limit)
}

// A prunedDoc is a candidate of the two-phase search: a row that contains
// one of the phrases that give the candidates.
type prunedDoc struct {
	id int64
	dl int // its number of tokens; -1 until read
	// The phrases (by index) it contains, with their instances; freq 0
	// when it is not known (a phrase of several tokens: the index's
	// postings say that the row has it, not how often).
	phrases []int
	freq    []int
	upper   float64 // a bound on its score, see bound
	done    bool    // scored, or bounded below the result
}

// bound returns a number no smaller than d's score, given its phrases,
// each phrase's bound maxTerm over any row, and the sum common of those
// bounds over the phrases not looked up.
func (d *prunedDoc) bound(c text.Corpus, idf, maxTerm []float64, common float64) float64 {
	b := common
	dl := max(d.dl, 0) // Term shrinks as dl grows: 0 bounds any length
	for i, p := range d.phrases {
		if f := d.freq[i]; f > 0 {
			b += min(c.Term(f, idf[p], dl), maxTerm[p])
		} else {
			b += maxTerm[p]
		}
	}
	return text.RoundUp(b)
}

// Batches of candidates whose lengths and contents are read at once.
const (
	firstPruneBatch = 32
	maxPruneBatch   = 512
)

// pruneEagerShare: a common phrase whose documents are at most
// pruneEagerShare times the candidates has its postings read before any
// content (an instance costs a fraction of a content read and tokenizing).
const pruneEagerShare = 4

// pruneScanShare bounds the postings a search reads: the phrases that give
// the candidates have at most pruneScanShare times keyword_prune_rows
// documents in all, or FTS5 answers. Postings decoded from FTS5's records
// (fts5read.go) cost a fraction of FTS5 scoring every match: at 1M turns
// 128 (384,000 postings at the default budget, about 46 MB of candidates
// at most) took the p95 of a top-10 search from 286 to 88 ms against 32
// (docs/benchmarks.md, "Keyword search at a million turns, again").
const pruneScanShare = 128

// pruneEagerScanShare bounds the postings read eagerly (pruneEagerShare),
// in keyword_prune_rows: past it a phrase joins only when a round or a
// proof needs it.
const pruneEagerScanShare = 8

// pruneContentShare is about how many postings (a phrase's document
// frequency) cost as much as one content read and tokenized: 16 when
// postings came through the fts5vocab table, 64 since they are decoded
// from FTS5's records (at 1M turns 5,161 contents a search became 653).
const pruneContentShare = 64

// rankPruned is the second part of searchPruned: it finds the candidates
// from the postings of plan's rare phrases and ranks them, reading the
// lengths and contents of only those that may rank (see the top of the
// file); while the result is not proved it moves the rarest common phrase
// to the rare ones.
func (d *DB) rankPruned(ctx context.Context, tx *sql.Tx, phrases []*prunePhrase, plan text.PrunePlan, corpus text.Corpus, structure, key []byte, where string, fargs []any, limit int) ([]driver.Hit, pruneOutcome, error) {
	idf := make([]float64, len(phrases))
	maxTerm := make([]float64, len(phrases))
	for i, p := range phrases {
		idf[i], maxTerm[i] = p.idf, p.max
	}
	var scanned int64
	for _, j := range plan.Rare {
		scanned += phrases[j].df
	}
	maxScan := int64(d.pruneRows) * pruneScanShare
	eagerScan := int64(d.pruneRows) * pruneEagerScanShare
	if scanned > maxScan {
		return nil, pruneExact, nil
	}
	content, temporary, err := d.searchStmt(ctx, fmt.Sprintf(qCandidates, where))
	if err != nil {
		return nil, pruneExact, err
	}
	if temporary {
		defer content.Close()
	}
	rk := &pruneRanker{
		d: d, ctx: ctx, tx: tx, key: key, corpus: corpus, idf: idf, maxTerm: maxTerm, limit: limit,
		sc:      d.newScorer(phrases),
		freq:    make([]int, len(phrases)),
		content: tx.StmtContext(ctx, content),
		fargs:   fargs,
	}
	if where != "" {
		pass, temporary, err := d.searchStmt(ctx, fmt.Sprintf(qPass, where))
		if err != nil {
			return nil, pruneExact, err
		}
		if temporary {
			defer pass.Close()
		}
		rk.pass = tx.StmtContext(ctx, pass)
	}
	rk.fts = d.newFTSReader(ctx, tx, structure)
	rk.sizes = tx.StmtContext(ctx, d.rStmts[qDocSizes])
	rare, common := plan.Rare, plan.Common
	for looked := 0; ; {
		for ; looked < len(rare); looked++ {
			if err := rk.postings(phrases[rare[looked]], rare[looked]); err != nil {
				return nil, pruneExact, err
			}
		}
		// A common phrase with few postings next to the candidates is
		// cheaper to read than the contents its bound would make us read:
		// read it now (see pruneEagerShare).
		if len(common) > 0 && phrases[common[0]].df <= pruneEagerShare*int64(len(rk.docs)) && scanned+phrases[common[0]].df <= eagerScan {
			scanned += phrases[common[0]].df
			rare, common = append(slices.Clip(rare), common[0]), common[1:]
			continue
		}
		rk.known = len(common) == 0
		var commonMax float64
		for _, j := range common {
			commonMax += maxTerm[j]
		}
		// Contents cost pruneContentShare times a posting: while the next
		// common phrase's postings cost less than the contents this round
		// would read, the round stops there and that phrase joins first.
		budget := -1
		if len(common) > 0 && scanned+phrases[common[0]].df <= maxScan {
			budget = int(phrases[common[0]].df / pruneContentShare)
		}
		ok, stopped, err := rk.rank(commonMax, budget)
		if err != nil || !ok {
			return nil, pruneExact, err // !ok: FTS5 answers
		}
		if stopped {
			scanned += phrases[common[0]].df
			rare, common = append(slices.Clip(rare), common[0]), common[1:]
			continue
		}
		// A row that is not a candidate has only common phrases.
		if len(common) == 0 || len(rk.top) == limit && rk.top[limit-1].Score > text.RoundUp(commonMax) {
			break
		}
		// Not proved: the rarest common phrase gives candidates too (the
		// plan's common phrases are rarest first).
		if scanned += phrases[common[0]].df; scanned > maxScan {
			return nil, pruneExact, nil
		}
		rare, common = append(slices.Clip(rare), common[0]), common[1:]
	}
	rk.sc.keepStems(d)
	return rk.top, pruneProved, nil
}

// A pruneRanker holds the state of rankPruned.
type pruneRanker struct {
	d       *DB
	ctx     context.Context
	tx      *sql.Tx
	key     []byte // the index's, see pruneCache
	corpus  text.Corpus
	idf     []float64
	maxTerm []float64 // by phrase, see prunePhrase.max
	limit   int
	docs    []*prunedDoc // in id order
	slab    []prunedDoc  // where new candidates are allocated
	ints    []int        // where their phrases and freq start
	fts     *ftsReader   // nil when FTS5's structure record is not understood
	sc      *scorer
	freq    []int
	sizes   *sql.Stmt // qDocSizes
	content *sql.Stmt // qCandidates with the filter
	pass    *sql.Stmt // qPass with the filter; nil without one
	fargs   []any
	// known is set once every phrase's postings are read: a candidate
	// whose every phrase is a term (frequencies known) and whose length is
	// known is then scored without reading its content.
	known bool
	top   []driver.Hit // the best scored rows that pass the filter, at most limit
}

// postings adds phrase i, p, to the candidates' phrases, and the rows that
// contain it to the candidates: for a term, with its instances in each row
// (decoded from FTS5's index, see fts5read.go, or else from the fts5vocab
// instance table); for a phrase of several tokens, the rows FTS5 matches.
func (r *pruneRanker) postings(p *prunePhrase, i int) error {
	var list []posting
	decoded := false
	if len(p.stems) == 1 {
		if r.fts != nil {
			var err error
			if list, decoded, err = r.fts.postings(p.stems[0], p.df); err != nil {
				return fmt.Errorf("postings of %s: %w", p.node, err)
			}
		}
		if decoded {
			r.d.ftsReads[0].Add(1)
		} else {
			r.d.ftsReads[1].Add(1)
		}
	}
	if !decoded {
		var ids sql.NullString
		var err error
		if len(p.stems) == 1 {
			err = r.tx.QueryRowContext(r.ctx, qTermPostings, p.stems[0]).Scan(&ids)
		} else {
			err = r.tx.QueryRowContext(r.ctx, qPhrasePostings, p.node.String()).Scan(&ids)
		}
		if err != nil {
			return err
		}
		if list, err = parsePostings(ids.String, len(p.stems) == 1); err != nil {
			return fmt.Errorf("postings of %s: %w", p.node, err)
		}
	}
	var n int64
	for _, q := range list {
		n += int64(max(q.freq, 1))
	}
	r.d.pruneReads[0].Add(n)
	r.add(list, i)
	return nil
}

// add merges list, postings of phrase i in id order, into the candidates
// (also in id order): no lookup per posting.
func (r *pruneRanker) add(list []posting, i int) {
	fresh := 0
	k := 0
	for _, q := range list {
		for k < len(r.docs) && r.docs[k].id < q.id {
			k++
		}
		if k == len(r.docs) || r.docs[k].id != q.id {
			fresh++
		}
	}
	if len(r.slab) < fresh {
		r.slab = make([]prunedDoc, max(fresh, 256))
	}
	// Room for two phrases a candidate: most have one or two.
	if len(r.ints) < 4*fresh {
		r.ints = make([]int, 4*max(fresh, 256))
	}
	out := make([]*prunedDoc, 0, len(r.docs)+fresh)
	k = 0
	for _, q := range list {
		for k < len(r.docs) && r.docs[k].id < q.id {
			out = append(out, r.docs[k])
			k++
		}
		var doc *prunedDoc
		if k < len(r.docs) && r.docs[k].id == q.id {
			doc = r.docs[k]
			k++
		} else {
			doc = &r.slab[0]
			r.slab = r.slab[1:]
			*doc = prunedDoc{id: q.id, dl: -1, phrases: r.ints[0:0:2], freq: r.ints[2:2:4]}
			r.ints = r.ints[4:]
		}
		doc.phrases = append(doc.phrases, i)
		doc.freq = append(doc.freq, int(q.freq))
		out = append(out, doc)
	}
	r.docs = append(out, r.docs[k:]...)
}

// doc returns the candidate with id, nil if there is none.
func (r *pruneRanker) doc(id int64) *prunedDoc {
	k, ok := slices.BinarySearchFunc(r.docs, id, func(d *prunedDoc, id int64) int { return cmp.Compare(d.id, id) })
	if !ok {
		return nil
	}
	return r.docs[k]
}

// parsePostings reads group_concat's output, decimal ids separated by
// commas, into postings in id order: with instances counted when each id
// stands for one instance, else freq 0 (not known).
func parsePostings(s string, instances bool) ([]posting, error) {
	var out []posting
	sorted := true
	for len(s) > 0 {
		end := strings.IndexByte(s, ',')
		if end < 0 {
			end = len(s)
		}
		id, err := strconv.ParseInt(s[:end], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("an id of the index: %w", err)
		}
		s = s[min(end+1, len(s)):]
		if n := len(out); n > 0 && out[n-1].id >= id {
			if out[n-1].id == id {
				if instances {
					out[n-1].freq++
				}
				continue
			}
			sorted = false
		}
		out = append(out, posting{id: id})
		if instances {
			out[len(out)-1].freq = 1
		}
	}
	if !sorted {
		slices.SortStableFunc(out, func(a, b posting) int { return cmp.Compare(a.id, b.id) })
		w := 0
		for _, q := range out {
			if w > 0 && out[w-1].id == q.id {
				out[w-1].freq += q.freq
				continue
			}
			out[w] = q
			w++
		}
		out = out[:w]
	}
	return out, nil
}

// rank scores the candidates that may rank, best bound first, until the
// bound of the next one is below the limit-th best score, given the sum
// commonMax of the bounds of the phrases whose postings were not read. ok is
// false when a content cannot be scored here. With budget at least 0 it
// reads at most budget contents: stopped says it stopped there, the
// candidates not scored left for the next round.
func (r *pruneRanker) rank(commonMax float64, budget int) (ok, stopped bool, err error) {
	pending := make(boundHeap, 0, len(r.docs))
	for _, doc := range r.docs {
		if !doc.done {
			doc.upper = doc.bound(r.corpus, r.idf, r.maxTerm, commonMax)
			pending = append(pending, doc)
		}
	}
	// Best bound first (ties by id): a heap, as only the first few are
	// usually taken.
	pending.init()
	batch := firstPruneBatch
	for len(pending) > 0 {
		// Rows whose bound is below the limit-th score cannot rank (a
		// tie would need an equal score); pending[0] has the best bound.
		if len(r.top) == r.limit && pending[0].upper < r.top[r.limit-1].Score {
			for _, doc := range pending {
				doc.done = true
			}
			break
		}
		n := min(batch, len(pending))
		chunk := make([]*prunedDoc, n)
		for k := range chunk {
			chunk[k] = pending.pop()
		}
		batch = min(2*batch, maxPruneBatch)
		if err := r.lengths(chunk, commonMax); err != nil {
			return false, false, err
		}
		var read []*prunedDoc
		for _, doc := range chunk {
			if len(r.top) < r.limit || doc.upper >= r.top[r.limit-1].Score {
				read = append(read, doc)
			}
		}
		if budget >= 0 && !r.known {
			if budget -= len(read); budget < 0 {
				return true, true, nil // the chunk stays pending
			}
		}
		for _, doc := range chunk {
			doc.done = true
		}
		if ok, err := r.score(read); !ok || err != nil {
			return false, false, err
		}
	}
	return true, false, nil
}

// A boundHeap orders candidates best bound first, then by id.
type boundHeap []*prunedDoc

func (h boundHeap) before(i, j int) bool {
	a, b := h[i], h[j]
	return a.upper > b.upper || a.upper == b.upper && a.id < b.id
}

func (h boundHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h boundHeap) down(i int) {
	for {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if c+1 < len(h) && h.before(c+1, c) {
			c++
		}
		if !h.before(c, i) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// pop removes and returns the first candidate.
func (h *boundHeap) pop() *prunedDoc {
	old := *h
	top := old[0]
	n := len(old) - 1
	old[0] = old[n]
	*h = old[:n]
	h.down(0)
	return top
}

// lengths finds the number of tokens of the candidates in docs, in the
// cache or else in FTS5's docsize table, and tightens their bounds.
func (r *pruneRanker) lengths(docs []*prunedDoc, commonMax float64) error {
	c := &r.d.prune
	missing := docs
	c.mu.RLock()
	if c.lengths != nil && bytes.Equal(c.key, r.key) {
		missing = nil
		for _, doc := range docs {
			if n, ok := c.lengths[doc.id]; ok {
				doc.dl = int(n)
			} else {
				missing = append(missing, doc)
			}
		}
	}
	c.mu.RUnlock()
	if len(missing) > 0 {
		if err := r.readLengths(missing); err != nil {
			return err
		}
	}
	for _, doc := range docs {
		doc.upper = doc.bound(r.corpus, r.idf, r.maxTerm, commonMax)
	}
	return nil
}

// readLengths reads the number of tokens of docs from FTS5's docsize table
// and keeps them in the cache while its key is the search's.
func (r *pruneRanker) readLengths(docs []*prunedDoc) error {
	rows, err := r.sizes.QueryContext(r.ctx, jsonIDs(docs, func(d *prunedDoc) int64 { return d.id }))
	if err != nil {
		return err
	}
	defer rows.Close()
	r.d.pruneReads[1].Add(int64(len(docs)))
	for rows.Next() {
		var id int64
		var sz []byte
		if err := rows.Scan(&id, &sz); err != nil {
			return err
		}
		n, size := sqliteVarint(sz)
		if doc := r.doc(id); doc != nil && size > 0 && n <= math.MaxInt32 {
			doc.dl = int(n)
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	c := &r.d.prune
	c.mu.Lock()
	defer c.mu.Unlock()
	if !bytes.Equal(c.key, r.key) {
		return nil // the index has changed since: these lengths may not be its
	}
	if c.lengths == nil || len(c.lengths)+len(docs) > maxCachedLengths {
		c.lengths = make(map[int64]int32, len(docs))
	}
	for _, doc := range docs {
		if doc.dl >= 0 {
			c.lengths[doc.id] = int32(doc.dl)
		}
	}
	return nil
}

// score reads the contents of docs that pass the filter, scores them as
// FTS5 does (see scorer) and keeps the best limit in r.top. ok is false
// when a content cannot be scored here.
func (r *pruneRanker) score(docs []*prunedDoc) (ok bool, err error) {
	if r.known {
		var read []*prunedDoc
		if docs, read, err = r.scoreKnown(docs); err != nil {
			return false, err
		}
		docs = read
	}
	if len(docs) == 0 {
		r.sortTop()
		return true, nil
	}
	rows, err := r.content.QueryContext(r.ctx, append([]any{jsonIDs(docs, func(d *prunedDoc) int64 { return d.id })}, r.fargs...)...)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	r.d.prune.mu.RLock()
	defer r.d.prune.mu.RUnlock()
	for rows.Next() {
		var id int64
		var content sql.RawBytes
		if err := rows.Scan(&id, &content); err != nil {
			return false, err
		}
		r.d.pruneReads[2].Add(1)
		dl, ok := r.sc.count(content, r.freq)
		if !ok {
			return false, nil
		}
		r.top = append(r.top, driver.Hit{ID: id, Score: r.corpus.Score(r.freq, r.idf, dl)})
	}
	if err := rows.Err(); err != nil {
		return false, err
	}
	r.sortTop()
	return true, nil
}

// scoreKnown adds to r.top those of docs whose score is known from the
// postings and lengths (every phrase of the query read, each of the row's
// phrases a term, its length read) and that pass the filter, with FTS5's
// bm25 computed from those figures; it returns the others.
func (r *pruneRanker) scoreKnown(docs []*prunedDoc) (_, read []*prunedDoc, err error) {
	var known []*prunedDoc
	for _, doc := range docs {
		if doc.dl >= 0 && !slices.Contains(doc.freq, 0) {
			known = append(known, doc)
		} else {
			read = append(read, doc)
		}
	}
	if len(known) == 0 {
		return nil, read, nil
	}
	passed := map[int64]bool{}
	if r.pass != nil {
		rows, err := r.pass.QueryContext(r.ctx, append([]any{jsonIDs(known, func(d *prunedDoc) int64 { return d.id })}, r.fargs...)...)
		if err != nil {
			return nil, nil, err
		}
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, nil, err
			}
			passed[id] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, nil, err
		}
	}
	for _, doc := range known {
		if r.pass != nil && !passed[doc.id] {
			continue
		}
		clear(r.freq)
		for k, p := range doc.phrases {
			r.freq[p] += doc.freq[k]
		}
		r.top = append(r.top, driver.Hit{ID: doc.id, Score: r.corpus.Score(r.freq, r.idf, doc.dl)})
	}
	return nil, read, nil
}

// sortTop orders r.top, best first, and keeps its best limit.
func (r *pruneRanker) sortTop() {
	slices.SortFunc(r.top, func(a, b driver.Hit) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return cmp.Compare(a.ID, b.ID)
	})
	if len(r.top) > r.limit {
		r.top = r.top[:r.limit]
	}
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
		c.bounds, c.pending = nil, 0
		c.lengths = nil
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

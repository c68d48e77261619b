package bolt

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/document"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	index "github.com/blevesearch/bleve_index_api"
	bbolt "go.etcd.io/bbolt"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/text"
)

// The keyword index holds one bleve document per memory, with the current
// version's content tokenized and stemmed exactly like FTS5's
// "porter unicode61 remove_diacritics 2", its length in tokens (for bm25) and
// the attributes searches filter on. It stores no content: a memory's words
// are only in the term dictionary and postings, which a forget compacts away.
const (
	fieldContent = "c"  // tokens with positions (term vectors), no frequencies or norms
	fieldLen     = "dl" // number of tokens, a doc value
	fieldNS      = "ns"
	fieldPool    = "pool"
	fieldStatus  = "st"
	fieldType    = "ty"
)

// Keys of bleve's internal store.
var (
	internalSeq     = []byte("memos.seq")     // the latest change sequence number applied
	internalStore   = []byte("memos.store")   // the id of the store the index belongs to
	internalMapping = []byte("memos.mapping") // indexMapping, the way newIndexDoc builds documents
)

// indexMapping numbers the ways newIndexDoc has built documents; an index
// built another way (older, or missing the key: 1) is rebuilt at open.
// 1: content with term frequencies and norms. 2: content with positions
// only (SkipFreqNorm): bm25 is computed from the positions and the length
// field, so bleve's own frequencies and norms were never read, and they took
// a tenth of the index. 3: document ids in base 62 (docID), not 19 decimal
// digits. 4: tokens of core/text's tokenizer version 2, which follows FTS5's
// character table outside ASCII (see tokenizerVersion).
const indexMapping = 4

// keywordStats are the corpus figures bm25 needs, kept in the bbolt file by
// every write and mirrored here, under DB.vis, for searches.
type keywordStats struct {
	docs, tokens uint64
}

// indexDoc is a memory's keyword index document, built in the write
// transaction and applied after the commit.
type indexDoc struct {
	doc *document.Document
}

// tokenStream is an analyzer that returns the tokens it was made of, so that
// a memory's content is tokenized once per write.
type tokenStream analysis.TokenStream

func (s tokenStream) Analyze([]byte) analysis.TokenStream { return analysis.TokenStream(s) }

// base62 are the digits of docID, in ASCII order.
const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// docID is the bleve id of memory id (never negative): the number of its
// base 62 digits, as a digit, then the digits, so that bleve's order of ids
// is numeric order, which breaks score ties. Every document stores its id:
// 100,000 ids of 4 characters instead of 19 decimal digits took 0.4 MiB
// less (and an index built with the old ids is rebuilt at open).
func docID(id int64) string {
	var b [12]byte
	i := len(b)
	for u := uint64(id); ; u /= 62 {
		i--
		b[i] = base62[u%62]
		if u < 62 {
			break
		}
	}
	i--
	b[i] = base62[len(b)-1-i]
	return string(b[i:])
}

func parseDocID(s string) (int64, error) {
	if len(s) < 2 || strings.IndexByte(base62, s[0]) != len(s)-1 {
		return 0, fmt.Errorf("bolt: malformed keyword index document id %q", s)
	}
	var u uint64
	for _, c := range []byte(s[1:]) {
		d := strings.IndexByte(base62, c)
		if d < 0 || u > (math.MaxUint64-uint64(d))/62 {
			return 0, fmt.Errorf("bolt: malformed keyword index document id %q", s)
		}
		u = u*62 + uint64(d)
	}
	return int64(u), nil
}

// newIndexDoc builds the document of m whose content has tokens toks
// (unstemmed, as text.Tokenize returns them).
func newIndexDoc(m *driver.Memory, toks []string) *indexDoc {
	ts := make(analysis.TokenStream, len(toks))
	backing := make([]analysis.Token, len(toks))
	for i, tok := range toks {
		backing[i] = analysis.Token{Term: []byte(text.Stem(tok)), Position: i + 1, Type: analysis.AlphaNumeric}
		ts[i] = &backing[i]
	}
	d := document.NewDocument(docID(m.ID))
	d.AddField(document.NewTextFieldCustom(fieldContent, nil, nil, index.IndexField|index.IncludeTermVectors|index.SkipFreqNorm, tokenStream(ts)))
	d.AddField(document.NewTextFieldCustom(fieldLen, nil, []byte(strconv.Itoa(len(toks))), index.IndexField|index.DocValues|index.SkipFreqNorm, nil))
	for _, f := range []struct{ name, v string }{
		{fieldNS, m.Namespace}, {fieldPool, string(m.Pool)}, {fieldStatus, string(m.Status)}, {fieldType, string(m.Type)},
	} {
		d.AddField(document.NewTextFieldCustom(f.name, nil, []byte(f.v), index.IndexField|index.SkipFreqNorm, nil))
	}
	return &indexDoc{doc: d}
}

// mergePlan is how scorch merges the index's segments, over its defaults
// (mergeplan.DefaultMergePlanOptions: up to 10 segments per tier, tiers 10
// times apart). Every segment repeats the term dictionary and the
// postings' headers of the terms it holds: fewer, larger segments take
// less disk (100k turns: 121.8 MiB with the defaults, 116.7 with 2 per
// tier 4 apart, 115.4 with these) for more merging in the background
// (about a fifth more CPU for an ingest of 1,000-memory batches). It is given to every open, so an
// index created with other options merges this way from then on. (A new
// map each time: bleve writes into it.)
func mergePlan() map[string]any {
	return map[string]any{"scorchMergePlanOptions": map[string]any{"MaxSegmentsPerTier": 1, "TierGrowth": 8.0}}
}

// newIndex creates an empty index in dir.
func newIndex(dir string) (bleve.Index, error) {
	im := mapping.NewIndexMapping()
	// Documents are built by newIndexDoc and added with IndexAdvanced, which
	// bypasses the mapping; nothing is indexed dynamically.
	im.DefaultMapping = mapping.NewDocumentDisabledMapping()
	im.IndexDynamic, im.StoreDynamic, im.DocValuesDynamic = false, false, false
	return bleve.NewUsing(dir, im, scorch.Name, scorch.Name, mergePlan())
}

// openIndex opens the keyword index and reconciles it with the store of
// record; a missing, foreign or unreadable index is rebuilt from the store.
func (d *DB) openIndex(ctx context.Context, storeID string) error {
	dir := filepath.Join(d.dir, IndexDir)
	idx, err := bleve.OpenUsing(dir, mergePlan())
	if err == nil {
		d.idx = idx
		var ok bool
		if ok, err = d.reconcile(ctx, storeID); err == nil && ok {
			return nil
		}
		idx.Close()
		d.idx = nil
		if ctx.Err() != nil {
			return fmt.Errorf("bolt: open %s: %w", d.dir, ctx.Err())
		}
	}
	// Rebuild: the index is derived data.
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("bolt: remove the keyword index to rebuild it: %w", err)
	}
	idx, err = newIndex(dir)
	if err != nil {
		os.RemoveAll(dir) // see below
		return fmt.Errorf("bolt: create the keyword index in %s: %w", dir, err)
	}
	d.idx = idx
	if err := d.rebuild(ctx, storeID); err != nil {
		d.idx.Close()
		d.idx = nil
		// A part of an index is of no use (the next attempt starts over)
		// and takes the room a full disk lacks.
		os.RemoveAll(dir)
		return err
	}
	return nil
}

func decodeU64(v []byte) uint64 {
	if len(v) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(v)
}

// reconcile brings the index up to the store's latest change: it re-indexes
// the memories changed after the index's last applied change and deletes the
// ones deleted since, then removes any document whose memory the store does
// not have. It reports false when the index must be rebuilt instead (it
// belongs to another store, is ahead of the store, or was built with
// another indexMapping).
func (d *DB) reconcile(ctx context.Context, storeID string) (bool, error) {
	owner, err := d.idx.GetInternal(internalStore)
	if err != nil {
		return false, err
	}
	raw, err := d.idx.GetInternal(internalSeq)
	if err != nil {
		return false, err
	}
	applied := decodeU64(raw)
	if string(owner) != storeID {
		return false, nil
	}
	mv, err := d.idx.GetInternal(internalMapping)
	if err != nil {
		return false, err
	}
	if decodeU64(mv) != indexMapping {
		d.remapped = true
		return false, nil
	}
	latest, err := d.sysU64(keySeq)
	if err != nil {
		return false, err
	}
	switch {
	case applied > latest:
		return false, nil
	case applied == latest:
		return true, nil
	}
	d.repaired = latest - applied
	if err := d.replay(ctx, applied, latest); err != nil {
		return false, err
	}
	return true, d.sweep(ctx)
}

// indexBatchSize is how many documents reconciliation sends to bleve at once.
const indexBatchSize = 1000

// replay applies the store's changes after seq from to the index and records
// latest as applied.
func (d *DB) replay(ctx context.Context, from, latest uint64) error {
	b := d.idx.NewBatch()
	flush := func(final bool) error {
		if final {
			b.SetInternal(internalSeq, u64(latest))
		}
		if b.Size() == 0 {
			return nil
		}
		if err := d.idx.Batch(b); err != nil {
			return fmt.Errorf("bolt: update the keyword index: %w", err)
		}
		// A new batch, not Reset: scorch may still read the old one after Batch returns.
		b = d.idx.NewBatch()
		return nil
	}
	err := d.bdb.View(func(tx *bbolt.Tx) error {
		mem := tx.Bucket(bktMem)
		c := tx.Bucket(bktChg).Cursor()
		for k, v := c.Seek(u64(from + 1)); k != nil; k, v = c.Next() {
			if err := ctx.Err(); err != nil {
				return err
			}
			id := int64(binary.BigEndian.Uint64(v))
			if err := batchRecord(b, id, mem.Get(v)); err != nil {
				return err
			}
			if b.Size() >= indexBatchSize {
				if err := flush(false); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("bolt: bring the keyword index up to date: %w", err)
	}
	return flush(true)
}

// batchRecord adds to b the document of memory id stored as rec, or its
// deletion when rec is nil.
func batchRecord(b *bleve.Batch, id int64, rec []byte) error {
	if rec == nil {
		b.Delete(docID(id))
		return nil
	}
	m, _, err := decodeRecord(id, rec)
	if err != nil {
		return err
	}
	return b.IndexAdvanced(newIndexDoc(m, text.Tokenize(m.Content)).doc)
}

// sweep deletes the documents of memories that the store does not have.
func (d *DB) sweep(ctx context.Context) error {
	ir, err := d.idx.Advanced()
	if err != nil {
		return err
	}
	r, err := ir.Reader()
	if err != nil {
		return err
	}
	defer r.Close()
	all, err := r.DocIDReaderAll()
	if err != nil {
		return err
	}
	defer all.Close()
	var ids []string
	for {
		iid, err := all.Next()
		if err != nil {
			return err
		}
		if iid == nil {
			break
		}
		ext, err := r.ExternalID(iid)
		if err != nil {
			return err
		}
		ids = append(ids, ext)
	}
	b := d.idx.NewBatch()
	err = d.bdb.View(func(tx *bbolt.Tx) error {
		mem := tx.Bucket(bktMem)
		for _, s := range ids {
			id, err := parseDocID(s)
			if err != nil || mem.Get(idKey(id)) == nil {
				b.Delete(s)
			}
		}
		return nil
	})
	if err != nil || b.Size() == 0 {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return d.idx.Batch(b)
}

// rebuild indexes every memory into the empty index.
func (d *DB) rebuild(ctx context.Context, storeID string) error {
	b := d.idx.NewBatch()
	var latest uint64
	err := d.bdb.View(func(tx *bbolt.Tx) error {
		latest = getU64(tx.Bucket(bktSys), keySeq)
		c := tx.Bucket(bktMem).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := batchRecord(b, int64(binary.BigEndian.Uint64(k)), v); err != nil {
				return err
			}
			if b.Size() >= indexBatchSize {
				if err := d.idx.Batch(b); err != nil {
					return err
				}
				b = d.idx.NewBatch() // not Reset: see replay
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("bolt: rebuild the keyword index: %w", err)
	}
	b.SetInternal(internalStore, []byte(storeID))
	b.SetInternal(internalSeq, u64(latest))
	b.SetInternal(internalMapping, u64(indexMapping))
	if err := d.idx.Batch(b); err != nil {
		return fmt.Errorf("bolt: rebuild the keyword index: %w", err)
	}
	return nil
}

// applyIndex applies a committed transaction to the keyword index and the
// keyword statistics. On failure the index is marked stale, to be repaired
// from the store by the next Update (or the next Open, which finds the
// index's change sequence number behind the store's).
func (d *DB) applyIndex(t *writeTx) error {
	if !t.dirty && len(t.docs) == 0 {
		return nil
	}
	if d.idx == nil {
		d.stale.Store(true)
		return d.errIndexClosed("keyword index")
	}
	b := d.idx.NewBatch()
	for id, doc := range t.docs {
		if doc == nil {
			b.Delete(docID(id))
		} else if err := b.IndexAdvanced(doc.doc); err != nil {
			d.stale.Store(true)
			return fmt.Errorf("bolt: keyword index: %w", err)
		}
	}
	b.SetInternal(internalSeq, u64(t.seq))
	d.vis.Lock()
	defer d.vis.Unlock()
	if err := d.idx.Batch(b); err != nil {
		d.stale.Store(true)
		return fmt.Errorf("bolt: keyword index: %w", err)
	}
	d.kstats = keywordStats{docs: t.count, tokens: t.tokens}
	return nil
}

// repairIndex brings an index that missed a commit up to date. A scorch
// index whose batch failed to persist (a full disk) can be broken in memory
// (a later batch panicked inside zapx), so the repair closes it and opens it
// again from its files, as Open does: reconciled with the records, or
// rebuilt. If that fails the index stays closed and keyword searches report
// it until a later write or open repairs it.
func (d *DB) repairIndex(ctx context.Context) error {
	d.vis.Lock()
	defer d.vis.Unlock()
	if d.idx != nil {
		d.idx.Close() // its in-memory state is what is suspect; the files are reopened
		d.idx = nil
	}
	err := d.openIndex(ctx, d.storeID)
	if err == nil {
		err = d.bdb.View(func(tx *bbolt.Tx) error {
			sys := tx.Bucket(bktSys)
			d.kstats = keywordStats{docs: getU64(sys, keyCount), tokens: getU64(sys, keyTokens)}
			return nil
		})
	}
	if err != nil {
		return fmt.Errorf("bolt: the keyword index is out of date and could not be repaired (%v); free disk space, then retry or reopen the store: %w", err, driver.ErrUnavailable)
	}
	d.stale.Store(false)
	return nil
}

// errIndexClosed is returned while a failed repair left the index closed.
func (d *DB) errIndexClosed(op string) error {
	return fmt.Errorf("bolt: %s: the keyword index could not be reopened after a failed write (a full disk?); free space, then retry: %w", op, driver.ErrUnavailable)
}

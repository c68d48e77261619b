package bolt

import (
	"context"
	"encoding/binary"
	"fmt"
	"sort"

	bbolt "go.etcd.io/bbolt"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/text"
)

// Without a keyword index. The index is derived data: when Open cannot
// bring it up to date (it must be rebuilt, and a full disk leaves no room
// for that), the store still opens, so that nothing it holds becomes
// unreadable. Reads come from the bbolt file as always; a keyword search
// scans every record and evaluates the query on it with the same code and
// the same bm25 as an indexed search (scanSearch), so it returns the same
// hits, in time proportional to the store's size. Every Update first tries
// to repair the index and fails, saying so, until it can (repairIndex).

// scanSearch answers a keyword search from the records alone, in one read
// transaction: the corpus figures and every phrase's document frequency
// (over every memory, whatever f says, as the index counts them), then the
// memories that pass f and match cq, scored and sorted as SearchKeyword's
// are. The caller has validated the query and holds d.vis.
func (d *DB) scanSearch(ctx context.Context, cq *text.Query, f driver.Filter, limit int) ([]driver.Hit, error) {
	type match struct {
		id   int64
		freq []int
		n    int
	}
	var (
		corpus  text.Corpus
		idf     []float64
		matches []match
	)
	newDoc := cq.DocFunc()
	phrases := cq.Phrases()
	err := d.bdb.View(func(tx *bbolt.Tx) error {
		sys := tx.Bucket(bktSys)
		corpus = text.Corpus{Docs: getU64(sys, keyCount), Tokens: getU64(sys, keyTokens)}
		if corpus.Docs == 0 {
			return nil
		}
		mem := tx.Bucket(bktMem)
		// each calls fn with every memory from id from on and its document,
		// in id order, until fn reports it is done.
		each := func(from int64, fn func(m *driver.Memory, doc *text.Doc) bool) error {
			c := mem.Cursor()
			n := 0
			for k, v := c.Seek(idKey(max(from, 0))); k != nil; k, v = c.Next() {
				if n++; n%256 == 0 {
					if err := ctx.Err(); err != nil {
						return err
					}
				}
				m, _, err := decodeRecord(int64(binary.BigEndian.Uint64(k)), v)
				if err != nil {
					return err
				}
				if fn(m, newDoc(m.Content)) {
					return nil
				}
			}
			return nil
		}
		dfs := make([]uint64, len(phrases))
		err := each(0, func(m *driver.Memory, doc *text.Doc) bool {
			for i, p := range phrases {
				if doc.Contains(p) {
					dfs[i]++
				}
			}
			if !matchFilter(&f, m.Namespace, m.Pool, m.Status, m.Type) {
				return false
			}
			if ok, freq := cq.Freq(doc); ok {
				matches = append(matches, match{m.ID, freq, doc.Len()})
			}
			return false
		})
		if err != nil {
			return err
		}
		idf = make([]float64, len(dfs))
		for i, n := range dfs {
			idf[i] = corpus.IDF(n)
		}
		stranded, err := cq.Stranded(func(e text.Expr, from int64) (int64, *text.Doc, bool, error) {
			var (
				id  int64
				doc *text.Doc
				ok  bool
			)
			err := each(from, func(m *driver.Memory, d *text.Doc) bool {
				if cq.Positioned(e, d) {
					id, doc, ok = m.ID, d, true
				}
				return ok
			})
			return id, doc, ok, err
		})
		if err != nil {
			return err
		}
		for _, m := range matches {
			stranded.Add(m.id, m.freq)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("bolt: search without the keyword index (scanning the records): %w", err)
	}
	hits := make([]driver.Hit, len(matches))
	for i, m := range matches {
		hits[i] = driver.Hit{ID: m.id, Score: corpus.Score(m.freq, idf, m.n)}
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].Score != hits[j].Score {
			return hits[i].Score > hits[j].Score
		}
		return hits[i].ID < hits[j].ID
	})
	return hits[:min(limit, len(hits))], nil
}

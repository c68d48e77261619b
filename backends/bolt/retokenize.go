package bolt

import (
	"context"
	"fmt"

	bbolt "go.etcd.io/bbolt"

	"github.com/memos-go/memos/core/text"
)

// keyTokenizer, in bktSys, is the version of core/text's tokenizer that the
// current records' token counts, and so keyTokens, were made with (missing:
// 1). The keyword index records its own (indexMapping).
var keyTokenizer = []byte("tokenizer")

// tokenizerVersion is core/text's tokenizer's: 2 follows FTS5's own
// character table (text.Fold) where 1 followed Go's Unicode tables. They
// tokenize ASCII alike.
const tokenizerVersion = 2

// retokenize brings the token counts of a store written with an older
// tokenizer up to date: it recounts the tokens of every current record
// whose content is not ASCII, rewrites the record when its count changed,
// and moves keyTokens by the difference, a batch per transaction; the last
// one records tokenizerVersion. A pass cut short is run again from the
// start at the next open: the records it fixed have nothing left to
// change. (The keyword index is rebuilt for the same change: indexMapping
// 4.)
func (d *DB) retokenize(ctx context.Context) error {
	if version, err := d.sysU64(keyTokenizer); err != nil || version >= tokenizerVersion {
		return err
	}
	var from []byte
	for done := false; !done; {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("bolt: open %s: recount tokens: %w", d.dir, err)
		}
		err := d.bdb.Update(func(tx *bbolt.Tx) error {
			var delta int64
			var err error
			from, err = rewrite(tx.Bucket(bktMem), from, packBatch, func(v []byte) ([]byte, error) {
				m, h, err := decodeRecord(0, v)
				if err != nil || text.IsASCII(m.Content) {
					return nil, err
				}
				n := len(text.Tokenize(m.Content))
				if n == h.NTok {
					return nil, nil
				}
				delta += int64(n) - int64(h.NTok)
				return encodeRecord(m, h.Seq, n)
			})
			if err != nil {
				return err
			}
			sys := tx.Bucket(bktSys)
			tokens := uint64(int64(getU64(sys, keyTokens)) + delta)
			if err := sys.Put(keyTokens, u64(tokens)); err != nil {
				return err
			}
			if done = from == nil; done {
				d.kstats.tokens = tokens
				return sys.Put(keyTokenizer, u64(tokenizerVersion))
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("bolt: open %s: recount tokens: %w", d.dir, err)
		}
	}
	return nil
}

package bolt

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2/document"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/index/scorch/mergeplan"
	bbolt "go.etcd.io/bbolt"

	"github.com/memos-go/memos/core/driver"
)

// Forgetting. bbolt never overwrites a page in place: a delete writes new
// pages and frees the old ones, which keep the deleted bytes until reused;
// bleve marks a deleted document in its segment and keeps its terms until
// the segment is merged. After a transaction that deleted memories, scrub
// therefore
//
//  1. merges the keyword index into one segment, which rewrites the term
//     dictionary without the deleted documents and removes the old segment
//     files, and
//  2. overwrites every free page of the bbolt file with zeros, then commits
//     one more transaction so that neither of bbolt's two meta pages refers
//     to a zeroed page.
//
// Zeroing a page that an open read transaction still uses would corrupt what
// that reader sees, so step 2 first waits for the read transactions that
// began before the delete committed (new ones are safe: they see a tree
// without the freed pages). If they do not finish within scrubWait, the scrub
// of the file is left pending: the last of those readers runs it when it
// ends, and it is retried after the next write, by Erase and at Close. The
// delete's transaction also stores keyErase, which the scrub's transaction
// removes, so that the next Open completes a scrub that a killed process
// left pending.

// scrubWait bounds how long a deleting Update waits for older readers.
var scrubWait = 2 * time.Second

// readerSet tracks the bbolt read transactions of View by epoch.
type readerSet struct {
	mu     sync.Mutex
	epoch  uint64
	active map[uint64]int
}

func (r *readerSet) init() { r.active = map[uint64]int{} }

func (r *readerSet) begin() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.active[r.epoch]++
	return r.epoch
}

func (r *readerSet) end(e uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.active[e]--; r.active[e] == 0 {
		delete(r.active, e)
	}
}

// waitOlder starts a new epoch and waits up to timeout until no reader of an
// earlier epoch is active. It reports whether none is.
func (r *readerSet) waitOlder(ctx context.Context, timeout time.Duration) bool {
	r.mu.Lock()
	r.epoch++
	e := r.epoch
	r.mu.Unlock()
	deadline := time.Now().Add(timeout)
	for delay := 50 * time.Microsecond; ; delay = min(2*delay, 10*time.Millisecond) {
		r.mu.Lock()
		older := false
		for ep := range r.active {
			if ep < e {
				older = true
				break
			}
		}
		r.mu.Unlock()
		if !older {
			return true
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		time.Sleep(delay)
	}
}

// Erase completes the scrub of deleted memories (see driver.Eraser), waiting
// up to wait for the read transactions that began before the delete.
func (d *DB) Erase(ctx context.Context, wait time.Duration) (bool, error) {
	if err := d.enter("erase"); err != nil {
		return false, err
	}
	defer d.leave()
	select {
	case d.writeSem <- struct{}{}:
	case <-ctx.Done():
		return false, fmt.Errorf("bolt: erase: waiting for a writer: %w", ctx.Err())
	}
	defer func() { <-d.writeSem }()
	if err := d.scrub(ctx, wait); err != nil {
		return false, err
	}
	return !d.scrubIndex.Load() && !d.scrubFile.Load(), nil
}

// Erasure says what the deletes left of the deleted content (see
// driver.ErasureReporter), after trying the pending scrub without waiting
// for readers.
func (d *DB) Erasure(ctx context.Context) (driver.Erasure, error) {
	_, err := d.Erase(ctx, 0)
	if errors.Is(err, driver.ErrClosed) {
		return driver.Erasure{}, err
	}
	// scrub stops at the first step that fails.
	idxWhy, fileWhy := "", ""
	if err != nil && d.scrubIndex.Load() {
		idxWhy = fmt.Sprintf(" (the last attempt failed: %v)", err)
	} else if err != nil {
		fileWhy = fmt.Sprintf(" (the last attempt failed: %v)", err)
	}
	var r driver.Erasure
	if d.scrubIndex.Load() {
		r.Pending = append(r.Pending, "the keyword index's files keep the deleted documents' terms until a merge rewrites them: retried after the next write, at close and at the next open"+idxWhy)
	} else {
		r.Done = append(r.Done, "the keyword index was merged into one segment, which rewrote its files without the deleted documents' terms")
	}
	if d.scrubFile.Load() {
		r.Pending = append(r.Pending, "free pages of the bbolt file keep the deleted records until they are zeroed, which waits for read transactions older than the forget: when they end, at the latest at the next open (forget --wait waits for it)"+fileWhy)
	} else {
		r.Done = append(r.Done, "every free page of the bbolt file, where the deleted records were, was overwritten with zeros")
	}
	return r, nil
}

// scrubAfterReaders runs a pending scrub of the file when a View ends, so
// that the last reader which kept it from running lets it run at once. It
// does nothing when a writer holds the semaphore (that writer retries).
func (d *DB) scrubAfterReaders() {
	if !d.scrubFile.Load() {
		return
	}
	select {
	case d.writeSem <- struct{}{}:
		d.scrub(context.Background(), 0)
		<-d.writeSem
	default:
	}
}

// erasePending reports whether the store records a delete whose scrub has
// not completed.
func (d *DB) erasePending() bool {
	pending := false
	d.bdb.View(func(tx *bbolt.Tx) error {
		pending = tx.Bucket(bktSys).Get(keyErase) != nil
		return nil
	})
	return pending
}

// scrub removes the bytes of deleted memories from the index and the store
// files (see above). It runs with the write semaphore held, or at Close or
// Open. A step that cannot run yet because of readers stays pending without
// an error; one that fails stays pending and returns the error.
func (d *DB) scrub(ctx context.Context, wait time.Duration) error {
	if d.scrubIndex.Load() {
		if err := d.compactIndex(ctx); err != nil {
			return fmt.Errorf("bolt: scrub the keyword index: %w", err)
		}
		d.scrubIndex.Store(false)
	}
	if d.scrubFile.Load() {
		if !d.readers.waitOlder(ctx, wait) {
			return nil
		}
		if err := d.zeroFreePages(); err != nil {
			return fmt.Errorf("bolt: scrub free pages: %w", err)
		}
		d.scrubFile.Store(false)
	}
	return nil
}

// scrubDocID is a document without fields that compactIndex adds and
// removes; its id is not a memory's, so reconciliation would remove it too.
const scrubDocID = "~scrub"

// compactIndex merges the keyword index into a single segment, which drops
// the deleted documents and their terms. scorch merges only persisted
// segments, and never a lone one, so it first adds an empty document in a
// segment of its own and waits until that is persisted (and with it every
// earlier segment), then merges, then deletes the empty document again.
func (d *DB) compactIndex(ctx context.Context) error {
	if d.idx == nil {
		return d.errIndexClosed("compact")
	}
	adv, err := d.idx.Advanced()
	if err != nil {
		return err
	}
	s, ok := adv.(*scorch.Scorch)
	if !ok {
		return fmt.Errorf("bolt: keyword index is a %T, not scorch", adv)
	}
	b := d.idx.NewBatch()
	persisted := make(chan error, 1)
	b.SetPersistedCallback(func(err error) { persisted <- err })
	if err := b.IndexAdvanced(document.NewDocument(scrubDocID)); err != nil {
		return err
	}
	if err := d.idx.Batch(b); err != nil {
		return err
	}
	select {
	case err := <-persisted:
		if err != nil {
			return err
		}
	case <-ctx.Done():
		return ctx.Err()
	}
	opts := mergeplan.SingleSegmentMergePlanOptions
	if err := s.ForceMerge(ctx, &opts); err != nil {
		return err
	}
	return d.idx.Delete(scrubDocID)
}

// zeroFreePages overwrites the free pages of the bbolt file with zeros in a
// write transaction, which then commits a marker so that both meta pages
// describe trees that do not use the zeroed pages. The caller makes sure
// that no read transaction older than the last commit is open.
func (d *DB) zeroFreePages() error {
	f, err := os.OpenFile(d.bdb.Path(), os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	return d.bdb.Update(func(tx *bbolt.Tx) error {
		ps := d.bdb.Info().PageSize
		zero := make([]byte, ps)
		hwm := int(tx.Size() / int64(ps))
		for id := 2; id < hwm; id++ {
			info, err := tx.Page(id)
			if err != nil {
				return err
			}
			if info == nil || info.Type != "free" {
				continue
			}
			if _, err := f.WriteAt(zero, int64(id)*int64(ps)); err != nil {
				return err
			}
		}
		sys := tx.Bucket(bktSys)
		// The index was compacted before (see scrub): nothing is pending.
		if err := sys.Delete(keyErase); err != nil {
			return err
		}
		// The commit syncs the file, zeroed pages included.
		return sys.Put(keyScrub, u64(getU64(sys, keyScrub)+1))
	})
}

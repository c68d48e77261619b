package vecsync

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/memos-go/memos/core/driver"
)

// live is the vector index as searches and writes see it: an index of one
// of the kinds, which VectorIndex "auto" replaces by an HNSW graph while
// the engine is open once the store grows past the threshold (see
// Index.maybeSwitch). Readers load the current index atomically, so the
// swap needs no lock on the search path.
type live struct {
	cur atomic.Pointer[namedIndex]
}

type namedIndex struct {
	idx  driver.VectorIndex
	name string
}

var _ driver.PersistentVectorIndex = (*live)(nil)

func newLive(idx driver.VectorIndex, name string) *live {
	l := &live{}
	l.cur.Store(&namedIndex{idx, name})
	return l
}

func (l *live) index() driver.VectorIndex { return l.cur.Load().idx }

// kind is the name of the current index's kind.
func (l *live) kind() string { return l.cur.Load().name }

func (l *live) Add(ctx context.Context, es ...driver.VectorEntry) error {
	return l.index().Add(ctx, es...)
}
func (l *live) Remove(ctx context.Context, ids ...int64) error {
	return l.index().Remove(ctx, ids...)
}
func (l *live) Len() int { return l.index().Len() }
func (l *live) Search(ctx context.Context, q []float32, k int, f driver.VectorFilter) ([]driver.Hit, error) {
	return l.index().Search(ctx, q, k, f)
}

// Save saves the current index; one that cannot be saved is an error (Save
// checks persistent() first).
func (l *live) Save(w io.Writer) error {
	p, ok := l.index().(driver.PersistentVectorIndex)
	if !ok {
		return fmt.Errorf("vector index %s cannot be saved", l.kind())
	}
	return p.Save(w)
}

func (l *live) persistent() bool {
	_, ok := l.index().(driver.PersistentVectorIndex)
	return ok
}

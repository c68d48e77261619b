package core

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"
)

// accessLog batches the access statistics that searches and packs record.
// Writing them with every search cost one write transaction per read
// (rewriting each returned memory's row), which on sqlite took about as
// long as the search itself and made every reader contend for the store's
// single writer. Instead a search adds its hits here, and a background
// writer stores what has gathered in one transaction, AccessFlush after
// the first pending access, and again at Close.
//
// The statistics are a hint, not something the caller asked to store: what
// a crash (or a failed write) loses is at most AccessFlush of them, never a
// memory. Until they are written, Get overlays the pending ones, so a
// process sees its own accesses at once.
//
// accessLog is safe for concurrent use.
type accessLog struct {
	every time.Duration
	b     Backend // where the statistics are written

	mu      sync.Mutex
	pending map[int64]accessCount
	closed  bool

	flushMu sync.Mutex    // serialises writes, so they apply in order
	wake    chan struct{} // cap 1: there is something pending
	stop    chan struct{}
	done    chan struct{}
}

type accessCount struct {
	n    int64
	last time.Time
}

// accessWriteTimeout bounds one write of the pending statistics.
const accessWriteTimeout = 10 * time.Second

func newAccessLog(every time.Duration, b Backend) *accessLog {
	l := &accessLog{every: every, b: b, pending: map[int64]accessCount{},
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go l.run()
	return l
}

// add records one access to each of ids at t.
func (l *accessLog) add(ids []int64, t time.Time) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	for _, id := range ids {
		c := l.pending[id]
		c.n++
		if t.After(c.last) {
			c.last = t
		}
		l.pending[id] = c
	}
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// overlay adds the pending accesses of m.ID to m, as the store will hold
// them once they are written.
func (l *accessLog) overlay(m *Memory) {
	l.mu.Lock()
	c, ok := l.pending[m.ID]
	l.mu.Unlock()
	if !ok {
		return
	}
	m.AccessCount += c.n
	if c.last.After(m.LastAccessedAt) {
		m.LastAccessedAt = c.last
	}
}

func (l *accessLog) run() {
	defer close(l.done)
	for {
		select {
		case <-l.stop:
			return
		case <-l.wake:
		}
		t := time.NewTimer(l.every)
		select {
		case <-l.stop:
			t.Stop()
			return
		case <-t.C:
		}
		l.flush()
	}
}

// flush writes what is pending in one transaction. A failed write drops
// it with a warning: retrying would keep growing the log on a store that
// cannot be written (a full disk, a read-only file).
func (l *accessLog) flush() {
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	l.mu.Lock()
	p := l.pending
	l.pending = map[int64]accessCount{}
	l.mu.Unlock()
	if len(p) == 0 {
		return
	}
	// The backends' Touch counts each occurrence of an id and keeps the
	// latest time, so an id accessed n times goes n times into the batch
	// of its latest access.
	byTime := map[time.Time][]int64{}
	for _, id := range slices.Sorted(maps.Keys(p)) {
		c := p[id]
		for range c.n {
			byTime[c.last] = append(byTime[c.last], id)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), accessWriteTimeout)
	defer cancel()
	if err := l.write(ctx, byTime); err != nil {
		slog.Warn("memos: could not record access counts; the results were complete, only their access statistics are not updated",
			"memories", len(p), "err", err)
	}
}

// close stops the background writer and writes what is pending.
func (l *accessLog) close() {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.closed = true
	l.mu.Unlock()
	close(l.stop)
	<-l.done
	l.flush()
}

// write stores access statistics in one transaction: each id once per
// access, in the batch of its latest access time.
func (l *accessLog) write(ctx context.Context, byTime map[time.Time][]int64) error {
	return l.b.Update(ctx, func(tx Tx) error {
		for _, t := range slices.SortedFunc(maps.Keys(byTime), time.Time.Compare) {
			if err := tx.Touch(byTime[t], t); err != nil {
				return err
			}
		}
		return nil
	})
}

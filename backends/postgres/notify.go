package postgres

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/memos-go/memos/core/driver"
)

// listener holds one connection, outside the pool, that LISTENs on the
// store's channel. Every write transaction that advances the change log
// sends its sequence number with pg_notify, which PostgreSQL delivers at
// commit to every listening session, on every host. The listener
// reconnects after the connection is lost.
type listener struct {
	cancel context.CancelFunc
	done   chan struct{}

	mu   sync.Mutex
	seq  uint64        // highest sequence number notified
	wake chan struct{} // closed and replaced on every notification
}

func newListener(pool *pgxpool.Pool, channel string) *listener {
	ctx, cancel := context.WithCancel(context.Background())
	l := &listener{cancel: cancel, done: make(chan struct{}), wake: make(chan struct{})}
	go l.run(ctx, pool, channel)
	return l
}

func (l *listener) run(ctx context.Context, pool *pgxpool.Pool, channel string) {
	defer close(l.done)
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := l.listen(ctx, pool, channel)
		if ctx.Err() != nil {
			return
		}
		_ = err // the connection failed: reconnect after a pause
		l.notify(0)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

func (l *listener) listen(ctx context.Context, pool *pgxpool.Pool, channel string) error {
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	conn, err := pgx.ConnectConfig(cctx, pool.Config().ConnConfig)
	cancel()
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		return err
	}
	// Changes made while no connection listened are found by the callers'
	// own polling; wake them once so they look.
	l.notify(0)
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		seq, _ := strconv.ParseUint(n.Payload, 10, 64)
		l.notify(seq)
	}
}

func (l *listener) notify(seq uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq = max(l.seq, seq)
	close(l.wake)
	l.wake = make(chan struct{})
}

// state returns the highest notified sequence number and a channel closed
// at the next notification.
func (l *listener) state() (uint64, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seq, l.wake
}

func (l *listener) close() {
	l.cancel()
	<-l.done
}

// WaitChange blocks until the store's change log is past after, and returns
// its sequence number then (driver.ChangeWaiter). Writes by any process on
// any host wake it through LISTEN/NOTIFY; it also reads the sequence itself
// at start and every Config.PollInterval (a notification can be missed
// while the listening connection reconnects). An engine over this store
// calls it in the background to bring its vector index up to date between
// searches.
func (d *DB) WaitChange(ctx context.Context, after uint64) (uint64, error) {
	if err := d.enter("wait for changes"); err != nil {
		return 0, err
	}
	defer d.leave()
	// Close does not wait for a waiter: it ends the wait.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-d.closing:
			cancel()
		case <-ctx.Done():
		}
	}()
	closedErr := func(err error) error {
		select {
		case <-d.closing:
			return fmt.Errorf("%s: wait for changes: store schema %s: %w", Name, d.schema, driver.ErrClosed)
		default:
			return err
		}
	}
	poll := d.poll
	for {
		notified, wake := d.lis.state()
		if notified > after {
			return notified, nil
		}
		var seq int64
		if err := d.pool.QueryRow(ctx, `SELECT seq FROM store`).Scan(&seq); err != nil {
			return 0, closedErr(dbError(ctx, "wait for changes", err))
		}
		if uint64(seq) > after {
			return uint64(seq), nil
		}
		t := time.NewTimer(poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return 0, closedErr(ctx.Err())
		case <-wake:
		case <-t.C:
		}
		t.Stop()
	}
}

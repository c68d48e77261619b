package vecsync

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/memos-go/memos/core/driver"
)

// follower keeps the index up to date in the background on a backend that
// reports other processes' writes (driver.ChangeWaiter): a write made
// through another process reaches this engine's index within a
// notification's delay, not at this engine's next search. Searches still
// call Sync first, so they never depend on it.
type follower struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// followPause is how long the follower waits after a failed wait or sync
// (the store unreachable, say) before it tries again.
const followPause = time.Second

func (x *Index) startFollowing() {
	w, ok := x.b.(driver.ChangeWaiter)
	if !ok || x.live == nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	x.follow = &follower{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(x.follow.done)
		for ctx.Err() == nil {
			after := x.seq.Load()
			seq, err := w.WaitChange(ctx, after)
			if err == nil {
				err = x.Sync(ctx)
			}
			if ctx.Err() != nil || errors.Is(err, driver.ErrClosed) {
				return // the engine, or its backend under it, was closed
			}
			if err != nil {
				slog.Debug("memos: background vector index sync failed; the next search syncs it", "err", err)
			}
			// A failure, or a store whose sequence went backwards (it was
			// replaced under this engine): pause rather than spin.
			if err != nil || x.seq.Load() < seq {
				select {
				case <-ctx.Done():
					return
				case <-time.After(followPause):
				}
			}
		}
	}()
}

// stopFollowing ends the background sync and waits for it.
func (x *Index) stopFollowing() {
	if x.follow != nil {
		x.follow.cancel()
		<-x.follow.done
	}
}

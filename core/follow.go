package core

import (
	"context"
	"errors"
	"log/slog"
	"time"
)

// follower keeps the vector index up to date in the background on a
// backend that reports other processes' writes (ChangeWaiter): a write made
// through another process reaches this engine's index within a
// notification's delay, not at this engine's next search. Searches still
// read the change log first (syncVectors), so they never depend on it.
type follower struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// followPause is how long the follower waits after a failed wait or sync
// (the store unreachable, say) before it tries again.
const followPause = time.Second

func (s *shared) startFollowing() {
	w, ok := s.b.(ChangeWaiter)
	if !ok || s.vec == nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.follow = &follower{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.follow.done)
		for ctx.Err() == nil {
			after := s.vecSeq.Load()
			seq, err := w.WaitChange(ctx, after)
			if err == nil {
				err = s.syncVectors(ctx)
			}
			if ctx.Err() != nil || errors.Is(err, ErrClosed) {
				return // the engine, or its backend under it, was closed
			}
			if err != nil {
				slog.Debug("memos: background vector index sync failed; the next search syncs it", "err", err)
			}
			// A failure, or a store whose sequence went backwards (it was
			// replaced under this engine): pause rather than spin.
			if err != nil || s.vecSeq.Load() < seq {
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
func (s *shared) stopFollowing() {
	if s.follow != nil {
		s.follow.cancel()
		<-s.follow.done
	}
}

// Package guard is the close guard the storage backends share: every
// operation enters and leaves it, Close waits for the operations in
// progress, and every call after Close fails with driver.ErrClosed, as the
// contract on driver.Backend asks.
package guard

import (
	"context"
	"fmt"
	"sync"

	"github.com/memos-go/memos/core/driver"
)

// Guard counts the operations in progress on a store. Set Backend and Store
// when creating it; it must not be copied after first use.
type Guard struct {
	// Backend and Store name the backend and the store's path in errors:
	// "bolt: view: store /home/me/.memos/memory.bolt: closed".
	Backend, Store string

	mu     sync.Mutex
	closed bool
	active sync.WaitGroup // operations in progress, waited for by Close
}

// Enter registers operation op, or returns an error wrapping
// driver.ErrClosed after Close. Every successful Enter must be followed by
// one Leave.
func (g *Guard) Enter(op string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return fmt.Errorf("%s: %s: store %s: %w", g.Backend, op, g.Store, driver.ErrClosed)
	}
	g.active.Add(1)
	return nil
}

// Leave ends an operation that Enter registered.
func (g *Guard) Leave() { g.active.Done() }

// Close refuses new operations and waits for those in progress. It returns
// an error wrapping driver.ErrClosed when the guard was closed already; the
// caller then releases nothing. Close must not be called between an
// operation's Enter and Leave, or it waits forever.
func (g *Guard) Close() error {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return fmt.Errorf("%s: close: store %s: %w", g.Backend, g.Store, driver.ErrClosed)
	}
	g.closed = true
	g.mu.Unlock()
	g.active.Wait()
	return nil
}

// Run is the envelope of a store's View and Update: it enters op, fails
// with ctx's error when ctx is done already, runs fn and leaves.
func (g *Guard) Run(ctx context.Context, op string, fn func() error) error {
	if err := g.Enter(op); err != nil {
		return err
	}
	defer g.Leave()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: %s: %w", g.Backend, op, err)
	}
	return fn()
}

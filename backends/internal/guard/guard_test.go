package guard

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/memos-go/memos/core/driver"
)

func TestCloseWaitsForOperations(t *testing.T) {
	g := &Guard{Backend: "test", Store: "/tmp/store"}
	if err := g.Enter("view"); err != nil {
		t.Fatal(err)
	}
	closed := make(chan error, 1)
	go func() { closed <- g.Close() }()
	// Close has either not started or is waiting: new operations may be
	// refused already, but Close does not return before Leave.
	select {
	case err := <-closed:
		t.Fatalf("Close returned %v while an operation was in progress", err)
	default:
	}
	g.Leave()
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	err := g.Enter("update")
	if !errors.Is(err, driver.ErrClosed) || !strings.Contains(err.Error(), "test: update: store /tmp/store") {
		t.Errorf("Enter after Close = %v, want ErrClosed naming the backend, operation and store", err)
	}
	if err := g.Close(); !errors.Is(err, driver.ErrClosed) {
		t.Errorf("second Close = %v, want ErrClosed", err)
	}
}

// Run enters and leaves around fn, and refuses a done context or a closed
// guard without calling fn.
func TestRun(t *testing.T) {
	g := &Guard{Backend: "test", Store: "/tmp/store"}
	calls := 0
	fn := func() error { calls++; return nil }
	if err := g.Run(t.Context(), "view", fn); err != nil || calls != 1 {
		t.Fatalf("Run = %v after %d calls", err, calls)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := g.Run(ctx, "update", fn); !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "test: update: ") || calls != 1 {
		t.Errorf("Run with a done context = %v (%d calls), want context.Canceled naming the backend and operation, no call", err, calls)
	}
	if err := g.Close(); err != nil { // waits for nothing: Run left
		t.Fatal(err)
	}
	if err := g.Run(t.Context(), "view", fn); !errors.Is(err, driver.ErrClosed) || calls != 1 {
		t.Errorf("Run after Close = %v (%d calls), want ErrClosed, no call", err, calls)
	}
}

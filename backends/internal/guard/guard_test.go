package guard

import (
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

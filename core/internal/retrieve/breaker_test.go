package retrieve

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// After a pause exactly one of many concurrent callers probes; the others
// keep skipping until the probe reports.
func TestBreakerLetsOneProbeThrough(t *testing.T) {
	var b Breaker
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for range 3 {
		if ok, _ := b.allow(t0, 3); !ok {
			t.Fatal("a closed Breaker refused a call")
		}
		b.done(errors.New("down"), t0, 3, time.Minute)
	}
	if ok, why := b.allow(t0.Add(59*time.Second), 3); ok || why == "" {
		t.Fatalf("an open Breaker allowed a call (why %q)", why)
	}
	later := t0.Add(61 * time.Second)
	var allowed atomic.Int32
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			if ok, _ := b.allow(later, 3); ok {
				allowed.Add(1)
			}
		})
	}
	wg.Wait()
	if got := allowed.Load(); got != 1 {
		t.Fatalf("%d concurrent callers probed after the pause, want 1", got)
	}
	if _, closed := b.done(nil, later, 3, time.Minute); !closed {
		t.Fatal("a successful probe did not close the Breaker")
	}
	if ok, _ := b.allow(later, 3); !ok {
		t.Fatal("a closed Breaker refused a call")
	}
	b.abandon()
	if ok, _ := b.allow(later, 3); !ok {
		t.Fatal("an abandoned call left the Breaker refusing calls")
	}
}

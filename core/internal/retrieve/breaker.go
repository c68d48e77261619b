package retrieve

import (
	"fmt"
	"sync"
	"time"
)

// Breaker pauses a dependency that keeps failing, so that a reranker that is
// down does not cost every search its timeout. After `after` failures in a
// row it is open: allow says no until `pause` has passed. Then one call is
// let through (a probe; calls made meanwhile keep skipping) and its outcome
// closes the Breaker or opens it for another pause. It is safe for
// concurrent use.
type Breaker struct {
	mu      sync.Mutex
	fails   int       // failures in a row
	until   time.Time // open (skipping) until then
	probing bool      // a call is being let through after a pause
	last    string    // the last failure, for the skip note
}

// allow says whether to make the call now; when not, why. after ≤ 0 means
// never pause. A caller that is allowed must report with done or abandon.
func (b *Breaker) allow(now time.Time, after int) (ok bool, why string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if after <= 0 || b.fails < after {
		return true, ""
	}
	if now.Before(b.until) || b.probing {
		return false, b.skipNote()
	}
	b.probing = true
	return true, ""
}

func (b *Breaker) skipNote() string {
	return fmt.Sprintf("paused after %d failures in a row (last: %s); next try after %s", b.fails, b.last, b.until.UTC().Format(time.RFC3339))
}

// done records a call's outcome; it reports whether this failure opened
// the Breaker and whether this success closed it.
func (b *Breaker) done(err error, now time.Time, after int, pause time.Duration) (opened, closed bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.probing = false
	if err == nil {
		closed = after > 0 && b.fails >= after
		b.fails, b.until, b.last = 0, time.Time{}, ""
		return false, closed
	}
	b.fails++
	b.last = err.Error()
	if after > 0 && b.fails >= after {
		b.until = now.Add(pause)
		return true, false
	}
	return false, false
}

// abandon ends an allowed call that says nothing about the dependency (the
// caller's own cancellation).
func (b *Breaker) abandon() {
	b.mu.Lock()
	b.probing = false
	b.mu.Unlock()
}

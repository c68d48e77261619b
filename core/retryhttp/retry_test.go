package retryhttp

import (
	"net/http"
	"testing"
	"time"
)

func TestRetryAfterParsing(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for h, want := range map[string]time.Duration{
		"":    -1,
		"abc": -1,
		"-3":  -1,
		"0":   0,
		"2":   2 * time.Second,
		"1.5": 1500 * time.Millisecond,
		now.Add(90 * time.Second).Format(http.TimeFormat):  90 * time.Second,
		now.Add(-90 * time.Second).Format(http.TimeFormat): 0,
	} {
		if got := RetryAfter(h, now); got != want {
			t.Errorf("RetryAfter(%q) = %v, want %v", h, got, want)
		}
	}
}

func TestBackoffGrowsWithJitter(t *testing.T) {
	c := &Client{Backoff: 100 * time.Millisecond}
	for attempt, base := range []time.Duration{100, 200, 400, 800} {
		base *= time.Millisecond
		for range 20 {
			if d := c.backoff(attempt); d < base/2 || d > base {
				t.Fatalf("attempt %d: wait %v outside [%v, %v]", attempt, d, base/2, base)
			}
		}
	}
	if d := c.backoff(40); d > MaxWait {
		t.Fatalf("wait %v exceeds the cap %v", d, MaxWait)
	}
}

package retryhttp

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/memos-go/memos/core/driver"
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

// A client that never retries says nothing of attempts; the hints reach the
// errors they are for.
func TestNoRetryHintsAndBodyLimit(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/busy":
			http.Error(w, `{"error":"overloaded"}`, http.StatusServiceUnavailable)
		case "/missing":
			http.Error(w, `{"error":"model \"m\" not found"}`, http.StatusNotFound)
		default:
			fmt.Fprint(w, `{"text":"`+strings.Repeat("x", 100)+`"}`)
		}
	}))
	defer srv.Close()
	c := &Client{Name: "test", MaxRetries: -1, DownHint: "start the server",
		StatusHint: func(status int, msg string) string { return fmt.Sprintf("%s [hint for %d]", msg, status) }}
	var out struct{ Text string }
	err := c.PostJSON(t.Context(), srv.URL+"/busy", struct{}{}, &out)
	if !errors.Is(err, driver.ErrUnavailable) || strings.Contains(err.Error(), "gave up") || !strings.Contains(err.Error(), "overloaded [hint for 503]") {
		t.Errorf("503 without retries = %v, want ErrUnavailable with the hint and no attempt count", err)
	}
	err = c.PostJSON(t.Context(), srv.URL+"/missing", struct{}{}, &out)
	if !errors.Is(err, driver.ErrInvalid) || !strings.Contains(err.Error(), `model "m" not found [hint for 404]`) {
		t.Errorf("404 = %v, want ErrInvalid with the hint", err)
	}
	c.MaxBody = 10
	if err := c.PostJSON(t.Context(), srv.URL+"/ok", struct{}{}, &out); err == nil || !strings.Contains(err.Error(), "not the JSON expected") {
		t.Errorf("answer beyond MaxBody = %v, want a cut answer that is not JSON", err)
	}
	c.MaxBody = 0
	if err := c.PostJSON(t.Context(), srv.URL+"/ok", struct{}{}, &out); err != nil || len(out.Text) != 100 {
		t.Errorf("answer = %q, %v", out.Text, err)
	}
	addr := srv.Listener.Addr().String()
	srv.Close()
	err = c.PostJSON(t.Context(), "http://"+addr+"/ok", struct{}{}, &out)
	if !errors.Is(err, driver.ErrUnavailable) || !strings.HasSuffix(err.Error(), "(start the server)") {
		t.Errorf("server down = %v, want ErrUnavailable ending with the hint", err)
	}
}

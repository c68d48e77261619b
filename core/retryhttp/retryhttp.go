// Package retryhttp is the HTTP client memos' model providers share (chat
// models for extraction and summaries, rerankers, the openai and ollama
// embedders; usable by any provider that posts JSON): one POST with a per-attempt timeout, retries with exponential
// backoff and jitter for 429 and 5xx answers and network errors, honouring
// the server's Retry-After, and errors that wrap driver.ErrUnavailable
// (worth retrying later) or driver.ErrInvalid (the request was refused).
package retryhttp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/memos-go/memos/core/driver"
)

// MaxWait caps one wait between attempts, also one asked for by Retry-After.
const MaxWait = time.Minute

// Client posts JSON to one server. The zero value is not usable; fill Name,
// and zero durations take the defaults noted.
type Client struct {
	// Name prefixes errors, e.g. "openai chat".
	Name string
	// Header is sent with every request (e.g. Authorization).
	Header http.Header
	// Timeout bounds one attempt (default 60s); MaxRetries is how many times
	// a retryable failure is retried (negative: never; 0: the default 3);
	// Backoff is the first wait between attempts (default 500ms).
	Timeout    time.Duration
	MaxRetries int
	Backoff    time.Duration
	// KeyHint is added to a 401's error, e.g. "check the key in $OPENAI_API_KEY".
	KeyHint string
	// DownHint is added to the error when the server cannot be reached, e.g.
	// "is Ollama running? start it with `ollama serve`".
	DownHint string
	// StatusHint, if set, may add to the message of an answer that is not
	// 200 OK (status is the HTTP status code, msg the server's message).
	StatusHint func(status int, msg string) string
	// MaxBody bounds the answer read (default 64 MiB).
	MaxBody int64
	// HTTP is the transport (default http.DefaultClient).
	HTTP *http.Client
}

// PostJSON posts in as JSON to url and decodes a 200 answer into out,
// retrying as configured.
func (c *Client) PostJSON(ctx context.Context, url string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("%s: %w", c.Name, err)
	}
	retries := c.MaxRetries
	if retries == 0 {
		retries = 3
	}
	for attempt := 0; ; attempt++ {
		data, retry, wait, err := c.attempt(ctx, url, body)
		if err == nil {
			if err := json.Unmarshal(data, out); err != nil {
				return fmt.Errorf("%s: POST %s: the answer is not the JSON expected: %v", c.Name, url, err)
			}
			return nil
		}
		if !retry || attempt >= retries {
			if retry && retries > 0 {
				return fmt.Errorf("%w (gave up after %d attempts)", err, attempt+1)
			}
			return err
		}
		if wait < 0 {
			wait = c.backoff(attempt)
		}
		if wait > MaxWait {
			return fmt.Errorf("%w; the server asks to wait %v, longer than memos waits (%v)", err, wait, MaxWait)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%s: %w (while waiting to retry after: %v)", c.Name, ctx.Err(), err)
		case <-t.C:
		}
	}
}

// backoff returns the wait before retry number attempt+1: the base doubled
// per attempt, capped, with full jitter in its upper half.
func (c *Client) backoff(attempt int) time.Duration {
	base := c.Backoff
	if base <= 0 {
		base = 500 * time.Millisecond
	}
	d := base << min(attempt, 16)
	if d <= 0 || d > MaxWait {
		d = MaxWait
	}
	return d/2 + rand.N(d/2+1)
}

// attempt sends one request. It reports whether a failure may be retried
// and how long the server asked to wait (negative when it did not say).
func (c *Client) attempt(ctx context.Context, url string, body []byte) (data []byte, retry bool, wait time.Duration, err error) {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = time.Minute
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, false, 0, fmt.Errorf("%w: %s: %v", driver.ErrInvalid, c.Name, err)
	}
	for k, vs := range c.Header {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", "application/json")
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, false, 0, fmt.Errorf("%s: %w", c.Name, ctx.Err())
		}
		if rctx.Err() != nil {
			return nil, true, -1, fmt.Errorf("%w: %s: POST %s: no answer within %v (timeout)", driver.ErrUnavailable, c.Name, url, timeout)
		}
		if c.DownHint != "" {
			return nil, true, -1, fmt.Errorf("%w: %s: POST %s: %v (%s)", driver.ErrUnavailable, c.Name, url, err, c.DownHint)
		}
		return nil, true, -1, fmt.Errorf("%w: %s: POST %s: %v", driver.ErrUnavailable, c.Name, url, err)
	}
	defer resp.Body.Close()
	limit := c.MaxBody
	if limit <= 0 {
		limit = 64 << 20
	}
	data, err = io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		if ctx.Err() != nil {
			return nil, false, 0, fmt.Errorf("%s: %w", c.Name, ctx.Err())
		}
		return nil, true, -1, fmt.Errorf("%w: %s: reading the answer of POST %s: %v", driver.ErrUnavailable, c.Name, url, err)
	}
	if resp.StatusCode != http.StatusOK {
		retry = resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500
		sentinel := driver.ErrInvalid
		if retry {
			sentinel = driver.ErrUnavailable
		}
		msg := ErrorText(data)
		if resp.StatusCode == http.StatusUnauthorized && c.KeyHint != "" {
			msg += "; " + c.KeyHint
		}
		if c.StatusHint != nil {
			msg = c.StatusHint(resp.StatusCode, msg)
		}
		return nil, retry, RetryAfter(resp.Header.Get("Retry-After"), time.Now()),
			fmt.Errorf("%w: %s: POST %s: %s: %s", sentinel, c.Name, url, resp.Status, msg)
	}
	return data, false, 0, nil
}

// ErrorText extracts the message of an error body in the OpenAI shape
// ({"error":{"message","type","code"}}), Ollama's and text-embeddings-
// inference's ({"error":"…"}), Cohere's ({"message":"…"}) or Jina's
// ({"detail":"…"}), or a short excerpt of any other body.
func ErrorText(data []byte) string {
	var oa struct {
		Error struct {
			Message string          `json:"message"`
			Type    string          `json:"type"`
			Code    json.RawMessage `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(data, &oa) == nil && oa.Error.Message != "" {
		s := oa.Error.Message
		var extra []string
		if oa.Error.Type != "" {
			extra = append(extra, "type "+oa.Error.Type)
		}
		if code := strings.Trim(string(oa.Error.Code), `"`); code != "" && code != "null" {
			extra = append(extra, "code "+code)
		}
		if len(extra) > 0 {
			s += " (" + strings.Join(extra, ", ") + ")"
		}
		return s
	}
	var ol struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(data, &ol) == nil && ol.Error != "" {
		return ol.Error
	}
	var co struct {
		Message string `json:"message"`
		Detail  any    `json:"detail"`
	}
	if json.Unmarshal(data, &co) == nil {
		if co.Message != "" {
			return co.Message
		}
		if d, ok := co.Detail.(string); ok && d != "" {
			return d
		}
	}
	s := strings.TrimSpace(string(data))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	if s == "" {
		s = "(empty body)"
	}
	return s
}

// RetryAfter parses a Retry-After header: seconds or an HTTP date (a date in
// the past means now). It returns -1 when the header is absent or
// unparseable.
func RetryAfter(h string, now time.Time) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return -1
	}
	if s, err := strconv.ParseFloat(h, 64); err == nil {
		if s < 0 || math.IsNaN(s) || math.IsInf(s, 0) {
			return -1
		}
		return time.Duration(min(s, 1e6) * float64(time.Second))
	}
	if t, err := http.ParseTime(h); err == nil {
		return max(t.Sub(now), 0)
	}
	return -1
}

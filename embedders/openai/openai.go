// Package openai embeds text with any server that speaks the OpenAI
// embeddings API (POST {base_url}/embeddings): OpenAI itself, vLLM, the
// llama.cpp server, LM Studio, Hugging Face TEI, LocalAI. It registers as
// the embedder "openai"; cmd/memos-embed-openai serves it as a plugin.
//
// The API key is read from the environment variable named by APIKeyEnv
// (default OPENAI_API_KEY) when the embedder opens; it never appears in the
// config. Requests that fail with 429 or a 5xx status, or that do not reach
// the server, are retried with exponential backoff and jitter, honouring the
// server's Retry-After header (seconds or an HTTP date); other 4xx errors are
// not retried. The server's error message is part of the returned error.
//
// Vectors are normalised to unit length on arrival, so the model info always
// says Normalized. Empty strings, which the OpenAI API rejects, are sent as a
// single space.
package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/embedders/internal/batched"
)

// Name is the registry name of this embedder.
const Name = "openai"

// Defaults for Config's zero fields.
const (
	DefaultBaseURL    = "https://api.openai.com/v1"
	DefaultModel      = "text-embedding-3-small"
	DefaultAPIKeyEnv  = "OPENAI_API_KEY"
	DefaultBatch      = 256
	DefaultMaxRetries = 4
	DefaultTimeout    = 60 * time.Second
	DefaultBackoff    = 500 * time.Millisecond
	// maxWait caps one wait between attempts, also one asked for by Retry-After.
	maxWait = time.Minute
)

// Config configures the embedder. Every field is optional.
type Config struct {
	// BaseURL is the API root, up to and including /v1 (default OpenAI's).
	BaseURL string `koanf:"base_url"`
	// Model is the model name sent with each request (default
	// text-embedding-3-small).
	Model string `koanf:"model"`
	// Dimensions, if set, asks the server for vectors of this size (OpenAI's
	// text-embedding-3 models can shorten their vectors). When zero, the
	// dimension is the model's: known for OpenAI's models, otherwise found
	// with one request when the embedder opens.
	Dimensions int `koanf:"dimensions"`
	// APIKeyEnv names the environment variable holding the API key (default
	// OPENAI_API_KEY). Servers that need no key work with it unset.
	APIKeyEnv string `koanf:"api_key_env"`
	// Batch is the most texts sent in one request (default 256).
	Batch int `koanf:"batch"`
	// MaxRetries is how often a failed request is retried (default 4;
	// negative means never).
	MaxRetries int `koanf:"max_retries"`
	// Timeout bounds one request (default 60s).
	Timeout time.Duration `koanf:"timeout"`
	// Backoff is the wait before the first retry; it doubles with each
	// retry, with jitter (default 500ms).
	Backoff time.Duration `koanf:"backoff"`
	// HTTPClient, if set, sends the requests.
	HTTPClient *http.Client `koanf:"-"`
}

// knownDims are the native dimensions of OpenAI's embedding models, so that
// opening one needs no request.
var knownDims = map[string]int{
	"text-embedding-3-small": 1536,
	"text-embedding-3-large": 3072,
	"text-embedding-ada-002": 1536,
}

func init() {
	driver.RegisterEmbedder(Name, driver.NewEmbedderDriver(Name, Open))
}

// Embedder calls an OpenAI-compatible embeddings endpoint. It is safe for
// concurrent use.
type Embedder struct {
	cfg    Config
	url    string
	key    string
	client *http.Client
	info   driver.ModelInfo
}

var _ driver.Embedder = (*Embedder)(nil)

// Open returns an embedder for cfg. It reads the API key from the
// environment and, when the dimension is not known, embeds one probe text.
func Open(ctx context.Context, cfg Config) (*Embedder, error) {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	if cfg.Model == "" {
		cfg.Model = DefaultModel
	}
	if cfg.APIKeyEnv == "" {
		cfg.APIKeyEnv = DefaultAPIKeyEnv
	}
	if cfg.Batch <= 0 {
		cfg.Batch = DefaultBatch
	}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = DefaultMaxRetries
	} else if cfg.MaxRetries < 0 {
		cfg.MaxRetries = 0
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = DefaultBackoff
	}
	if cfg.Dimensions < 0 {
		return nil, fmt.Errorf("%w: openai: dimensions %d, want > 0 or unset", driver.ErrInvalid, cfg.Dimensions)
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: openai: base_url %q is not an http(s) URL such as %s", driver.ErrInvalid, cfg.BaseURL, DefaultBaseURL)
	}
	e := &Embedder{
		cfg:    cfg,
		url:    strings.TrimRight(cfg.BaseURL, "/") + "/embeddings",
		key:    os.Getenv(cfg.APIKeyEnv),
		client: cfg.HTTPClient,
	}
	if e.client == nil {
		e.client = http.DefaultClient
	}
	if e.key == "" && u.Host == "api.openai.com" {
		return nil, fmt.Errorf("%w: openai: no API key: set the environment variable %s", driver.ErrInvalid, cfg.APIKeyEnv)
	}
	dim := cfg.Dimensions
	if dim == 0 {
		dim = knownDims[cfg.Model]
	}
	info, err := batched.Info(ctx, "openai", cfg.Model, dim, cfg.Batch, "dimensions", e.request)
	if err != nil {
		return nil, err
	}
	e.info = info
	return e, nil
}

// Info implements driver.Embedder.
func (e *Embedder) Info(context.Context) (driver.ModelInfo, error) { return e.info, nil }

// Embed implements driver.Embedder. Batches larger than Batch are sent as
// several requests.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return batched.Embed(ctx, texts, e.cfg.Batch, e.info.Dim, "openai: model "+e.cfg.Model, e.request)
}

type request struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	Dimensions     int      `json:"dimensions,omitempty"`
	EncodingFormat string   `json:"encoding_format"`
}

type response struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
	Model string `json:"model"`
}

type errorBody struct {
	Error struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
	} `json:"error"`
}

// request embeds one batch, retrying as configured, and returns the
// vectors in input order, normalised.
func (e *Embedder) request(ctx context.Context, texts []string) ([][]float32, error) {
	in := make([]string, len(texts))
	for i, s := range texts {
		if s == "" {
			s = " "
		}
		in[i] = s
	}
	body, err := json.Marshal(request{Model: e.cfg.Model, Input: in, Dimensions: e.cfg.Dimensions, EncodingFormat: "float"})
	if err != nil {
		return nil, fmt.Errorf("openai: %w", err)
	}
	for attempt := 0; ; attempt++ {
		vs, retry, wait, err := e.attempt(ctx, body, len(texts))
		if err == nil {
			return vs, nil
		}
		if !retry || attempt >= e.cfg.MaxRetries {
			if retry {
				return nil, fmt.Errorf("%w (gave up after %d attempts)", err, attempt+1)
			}
			return nil, err
		}
		if wait < 0 {
			wait = e.backoff(attempt)
		}
		if wait > maxWait {
			return nil, fmt.Errorf("%w; the server asks to wait %v, longer than memos waits (%v)", err, wait, maxWait)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("openai: %w (while waiting to retry after: %v)", ctx.Err(), err)
		case <-t.C:
		}
	}
}

// backoff returns the wait before retry number attempt+1: the base doubled
// per attempt, capped, with full jitter in its upper half.
func (e *Embedder) backoff(attempt int) time.Duration {
	d := e.cfg.Backoff << min(attempt, 16)
	if d <= 0 || d > maxWait {
		d = maxWait
	}
	return d/2 + rand.N(d/2+1)
}

// attempt sends one request. It reports whether a failure may be retried
// and how long the server asked to wait (negative when it did not say).
func (e *Embedder) attempt(ctx context.Context, body []byte, n int) (vs [][]float32, retry bool, wait time.Duration, err error) {
	rctx, cancel := context.WithTimeout(ctx, e.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return nil, false, 0, fmt.Errorf("%w: openai: %v", driver.ErrInvalid, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if e.key != "" {
		req.Header.Set("Authorization", "Bearer "+e.key)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, false, 0, fmt.Errorf("openai: %w", ctx.Err())
		}
		if rctx.Err() != nil {
			return nil, true, -1, fmt.Errorf("%w: openai: POST %s: no answer within %v (timeout)", driver.ErrUnavailable, e.url, e.cfg.Timeout)
		}
		return nil, true, -1, fmt.Errorf("%w: openai: POST %s: %v", driver.ErrUnavailable, e.url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<30))
	if err != nil {
		if ctx.Err() != nil {
			return nil, false, 0, fmt.Errorf("openai: %w", ctx.Err())
		}
		return nil, true, -1, fmt.Errorf("%w: openai: reading the answer of POST %s: %v", driver.ErrUnavailable, e.url, err)
	}
	if resp.StatusCode != http.StatusOK {
		retry = resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500
		sentinel := driver.ErrInvalid
		if retry {
			sentinel = driver.ErrUnavailable
		}
		return nil, retry, retryAfter(resp.Header.Get("Retry-After"), time.Now()),
			fmt.Errorf("%w: openai: POST %s: %s: %s", sentinel, e.url, resp.Status, errorText(resp.StatusCode, data, e.cfg.APIKeyEnv))
	}
	var r response
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, false, 0, fmt.Errorf("openai: POST %s: the answer is not an embeddings response: %v", e.url, err)
	}
	if len(r.Data) != n {
		return nil, false, 0, fmt.Errorf("openai: POST %s: %d embeddings for %d texts", e.url, len(r.Data), n)
	}
	vs = make([][]float32, n)
	for _, d := range r.Data {
		if d.Index < 0 || d.Index >= n || vs[d.Index] != nil {
			return nil, false, 0, fmt.Errorf("openai: POST %s: embedding index %d is out of range or repeated", e.url, d.Index)
		}
		if !driver.Normalize(d.Embedding) {
			return nil, false, 0, fmt.Errorf("openai: POST %s: embedding %d is zero or not finite", e.url, d.Index)
		}
		vs[d.Index] = d.Embedding
	}
	return vs, false, 0, nil
}

// errorText extracts the message of an OpenAI error body, or a short
// excerpt of any other body.
func errorText(status int, data []byte, keyEnv string) string {
	var b errorBody
	if json.Unmarshal(data, &b) == nil && b.Error.Message != "" {
		s := b.Error.Message
		var extra []string
		if b.Error.Type != "" {
			extra = append(extra, "type "+b.Error.Type)
		}
		if c := strings.Trim(string(b.Error.Code), `"`); c != "" && c != "null" {
			extra = append(extra, "code "+c)
		}
		if len(extra) > 0 {
			s += " (" + strings.Join(extra, ", ") + ")"
		}
		if status == http.StatusUnauthorized {
			s += "; check the key in $" + keyEnv
		}
		return s
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

// retryAfter parses a Retry-After header: seconds or an HTTP date (a date
// in the past means now). It returns -1 when the header is absent or
// unparseable.
func retryAfter(h string, now time.Time) time.Duration {
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

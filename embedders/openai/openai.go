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
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/retryhttp"
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
	cfg  Config
	url  string
	http *retryhttp.Client
	info driver.ModelInfo
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
	key := os.Getenv(cfg.APIKeyEnv)
	retries := cfg.MaxRetries
	if retries == 0 {
		retries = -1 // retryhttp reads 0 as its default
	}
	e := &Embedder{
		cfg: cfg,
		url: strings.TrimRight(cfg.BaseURL, "/") + "/embeddings",
		http: &retryhttp.Client{Name: "openai", Header: http.Header{}, Timeout: cfg.Timeout, MaxRetries: retries,
			Backoff: cfg.Backoff, KeyHint: "check the key in $" + cfg.APIKeyEnv, HTTP: cfg.HTTPClient},
	}
	if key != "" {
		e.http.Header.Set("Authorization", "Bearer "+key)
	}
	if key == "" && u.Host == "api.openai.com" {
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

// request embeds one batch, retrying as configured (core/retryhttp), and
// returns the vectors in input order, normalised.
func (e *Embedder) request(ctx context.Context, texts []string) ([][]float32, error) {
	in := make([]string, len(texts))
	for i, s := range texts {
		if s == "" {
			s = " "
		}
		in[i] = s
	}
	var r response
	req := request{Model: e.cfg.Model, Input: in, Dimensions: e.cfg.Dimensions, EncodingFormat: "float"}
	if err := e.http.PostJSON(ctx, e.url, req, &r); err != nil {
		return nil, err
	}
	n := len(texts)
	if len(r.Data) != n {
		return nil, fmt.Errorf("openai: POST %s: %d embeddings for %d texts", e.url, len(r.Data), n)
	}
	vs := make([][]float32, n)
	for _, d := range r.Data {
		if d.Index < 0 || d.Index >= n || vs[d.Index] != nil {
			return nil, fmt.Errorf("openai: POST %s: embedding index %d is out of range or repeated", e.url, d.Index)
		}
		if !driver.Normalize(d.Embedding) {
			return nil, fmt.Errorf("openai: POST %s: embedding %d is zero or not finite", e.url, d.Index)
		}
		vs[d.Index] = d.Embedding
	}
	return vs, nil
}

// Package ollama embeds text with a local Ollama server through its
// POST /api/embed endpoint. It registers as the embedder "ollama";
// cmd/memos-embed-ollama serves it as a plugin.
//
// Opening the embedder asks the server for one probe embedding to learn the
// model's dimension, unless Config.Dim gives it. Vectors are normalised to
// unit length on arrival, so the model info always says Normalized; empty
// strings are sent as a single space. Ollama is a local server, so failed
// requests are not retried (core/retryhttp with no retries): a server that is down gives driver.ErrUnavailable
// with a hint to start it, an unknown model driver.ErrInvalid with a hint to
// pull it.
package ollama

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/retryhttp"
	"github.com/memos-go/memos/embedders/internal/batched"
)

// Name is the registry name of this embedder.
const Name = "ollama"

// Defaults for Config's zero fields.
const (
	DefaultBaseURL = "http://localhost:11434"
	DefaultModel   = "nomic-embed-text"
	DefaultBatch   = 64
	DefaultTimeout = 2 * time.Minute // the first request may load the model
)

// Config configures the embedder. Every field is optional.
type Config struct {
	// BaseURL is the Ollama server (default http://localhost:11434).
	BaseURL string `koanf:"base_url"`
	// Model is the embedding model (default nomic-embed-text); pull it first
	// with `ollama pull <model>`.
	Model string `koanf:"model"`
	// KeepAlive is how long Ollama keeps the model loaded after a request,
	// in Ollama's syntax ("5m", "1h", "-1" for ever); empty leaves Ollama's
	// default.
	KeepAlive string `koanf:"keep_alive"`
	// Batch is the most texts sent in one request (default 64).
	Batch int `koanf:"batch"`
	// Timeout bounds one request (default 2m).
	Timeout time.Duration `koanf:"timeout"`
	// Dim is the model's dimension; when zero it is found with one request
	// at open.
	Dim int `koanf:"dim"`
	// Truncate, when set, is sent as Ollama's truncate flag: true cuts
	// texts longer than the model's context, false makes them an error.
	// Unset leaves Ollama's default (true).
	Truncate *bool `koanf:"truncate"`
	// HTTPClient, if set, sends the requests.
	HTTPClient *http.Client `koanf:"-"`
}

func init() {
	driver.RegisterEmbedder(Name, driver.NewEmbedderDriver(Name, Open))
}

// Embedder calls Ollama's /api/embed. It is safe for concurrent use.
type Embedder struct {
	cfg  Config
	url  string
	http *retryhttp.Client
	info driver.ModelInfo
}

var _ driver.Embedder = (*Embedder)(nil)

// Open returns an embedder for cfg, probing the model's dimension when
// cfg.Dim is zero.
func Open(ctx context.Context, cfg Config) (*Embedder, error) {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	if cfg.Model == "" {
		cfg.Model = DefaultModel
	}
	if cfg.Batch <= 0 {
		cfg.Batch = DefaultBatch
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Dim < 0 {
		return nil, fmt.Errorf("%w: ollama: dim %d, want > 0 or unset", driver.ErrInvalid, cfg.Dim)
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: ollama: base_url %q is not an http(s) URL such as %s", driver.ErrInvalid, cfg.BaseURL, DefaultBaseURL)
	}
	e := &Embedder{cfg: cfg, url: strings.TrimRight(cfg.BaseURL, "/") + "/api/embed", http: &retryhttp.Client{
		Name: "ollama", Timeout: cfg.Timeout, MaxRetries: -1, HTTP: cfg.HTTPClient, MaxBody: 1 << 30,
		DownHint: "is Ollama running? start it with `ollama serve`",
		StatusHint: func(status int, msg string) string {
			if status == http.StatusNotFound && strings.Contains(msg, "not found") {
				msg += fmt.Sprintf(" (pull it with `ollama pull %s`)", cfg.Model)
			}
			return msg
		},
	}}
	info, err := batched.Info(ctx, "ollama", cfg.Model, cfg.Dim, cfg.Batch, "dim", e.request)
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
	return batched.Embed(ctx, texts, e.cfg.Batch, e.info.Dim, "ollama: model "+e.cfg.Model, e.request)
}

type request struct {
	Model     string   `json:"model"`
	Input     []string `json:"input"`
	KeepAlive string   `json:"keep_alive,omitempty"`
	Truncate  *bool    `json:"truncate,omitempty"`
}

type response struct {
	Model      string      `json:"model"`
	Embeddings [][]float32 `json:"embeddings"`
}

// request embeds one batch and returns normalised vectors in input order.
func (e *Embedder) request(ctx context.Context, texts []string) ([][]float32, error) {
	in := make([]string, len(texts))
	for i, s := range texts {
		if s == "" {
			s = " "
		}
		in[i] = s
	}
	var r response
	if err := e.http.PostJSON(ctx, e.url, request{Model: e.cfg.Model, Input: in, KeepAlive: e.cfg.KeepAlive, Truncate: e.cfg.Truncate}, &r); err != nil {
		return nil, err
	}
	if len(r.Embeddings) != len(texts) {
		return nil, fmt.Errorf("ollama: POST %s: %d embeddings for %d texts", e.url, len(r.Embeddings), len(texts))
	}
	for i, v := range r.Embeddings {
		if !driver.Normalize(v) {
			return nil, fmt.Errorf("ollama: POST %s: embedding %d is zero or not finite", e.url, i)
		}
	}
	return r.Embeddings, nil
}

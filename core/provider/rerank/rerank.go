// Package rerank is memos' HTTP reranker: it scores search candidates with
// a cross-encoder served behind the widely used /rerank API, in its two
// shapes — Hugging Face text-embeddings-inference (POST /rerank
// {"query","texts"} → [{"index","score"}]) and Cohere's, which Jina also
// serves (POST /v1/rerank {"model","query","documents","top_n"} →
// {"results":[{"index","relevance_score"}]}). It registers as "http";
// Config.API picks the shape.
package rerank

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/retryhttp"
)

// Name is the name the reranker registers under.
const Name = "http"

func init() { driver.RegisterReranker(Name, driver.NewRerankerDriver(Name, Open)) }

// Config selects a reranking server. The zero value asks a
// text-embeddings-inference server on http://localhost:8080.
type Config struct {
	// API is "tei" (Hugging Face text-embeddings-inference; the default),
	// "cohere" or "jina".
	API string `koanf:"api"`
	// BaseURL is the server; the request goes to BaseURL + "/rerank".
	// Defaults: http://localhost:8080 (tei), https://api.cohere.com/v1
	// (cohere), https://api.jina.ai/v1 (jina).
	BaseURL string `koanf:"base_url"`
	// Model names the reranking model (cohere and jina; default
	// rerank-english-v3.0 and jina-reranker-v2-base-multilingual). A tei
	// server serves the one model it was started with.
	Model string `koanf:"model"`
	// APIKeyEnv names the environment variable holding the bearer key
	// (default COHERE_API_KEY, JINA_API_KEY; none for tei).
	APIKeyEnv string `koanf:"api_key_env"`
	// Timeout bounds one attempt (default 10s); MaxRetries how often a 429,
	// 5xx or network failure is retried (default 3; negative: never). The
	// engine's search.rerank_timeout bounds the whole call.
	Timeout    time.Duration `koanf:"timeout"`
	MaxRetries int           `koanf:"max_retries"`
}

// Reranker asks one reranking server. It is safe for concurrent use.
type Reranker struct {
	api, url, model string
	http            *retryhttp.Client
}

var _ driver.Reranker = (*Reranker)(nil)

// Open checks cfg and returns a reranker. It does not contact the server.
func Open(ctx context.Context, cfg Config) (*Reranker, error) {
	if cfg.API == "" {
		cfg.API = "tei"
	}
	if cfg.Timeout < 0 {
		return nil, driver.Invalidf("%s reranker: timeout %v is negative", Name, cfg.Timeout)
	}
	r := &Reranker{api: cfg.API, model: cfg.Model}
	hc := &retryhttp.Client{Name: cfg.API + " rerank", Timeout: cfg.Timeout, MaxRetries: cfg.MaxRetries, Header: http.Header{}}
	if hc.Timeout == 0 {
		hc.Timeout = 10 * time.Second
	}
	var base, env string
	switch cfg.API {
	case "tei":
		base = "http://localhost:8080"
	case "cohere":
		base, env = "https://api.cohere.com/v1", "COHERE_API_KEY"
		if r.model == "" {
			r.model = "rerank-english-v3.0"
		}
	case "jina":
		base, env = "https://api.jina.ai/v1", "JINA_API_KEY"
		if r.model == "" {
			r.model = "jina-reranker-v2-base-multilingual"
		}
	default:
		return nil, driver.Invalidf("%s reranker: api %q is not known (want tei, cohere or jina)", Name, cfg.API)
	}
	if cfg.BaseURL != "" {
		base = cfg.BaseURL
	}
	if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
		return nil, driver.Invalidf("%s reranker: base_url %q is not an http(s) URL", Name, base)
	}
	r.url = strings.TrimRight(base, "/") + "/rerank"
	if cfg.APIKeyEnv != "" {
		env = cfg.APIKeyEnv
	}
	if env != "" {
		if key := os.Getenv(env); key != "" {
			hc.Header.Set("Authorization", "Bearer "+key)
		}
		hc.KeyHint = "check the key in $" + env
	}
	r.http = hc
	return r, nil
}

// Rerank scores texts against query in one request.
func (r *Reranker) Rerank(ctx context.Context, query string, texts []string) ([]float64, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	type ranked struct {
		Index int      `json:"index"`
		Score *float64 `json:"score"`           // tei
		Rel   *float64 `json:"relevance_score"` // cohere, jina
	}
	var got []ranked
	if r.api == "tei" {
		req := struct {
			Query    string   `json:"query"`
			Texts    []string `json:"texts"`
			Truncate bool     `json:"truncate"`
		}{query, texts, true}
		if err := r.http.PostJSON(ctx, r.url, req, &got); err != nil {
			return nil, err
		}
	} else {
		req := struct {
			Model           string   `json:"model"`
			Query           string   `json:"query"`
			Documents       []string `json:"documents"`
			TopN            int      `json:"top_n"`
			ReturnDocuments bool     `json:"return_documents"`
		}{r.model, query, texts, len(texts), false}
		var resp struct {
			Results []ranked `json:"results"`
		}
		if err := r.http.PostJSON(ctx, r.url, req, &resp); err != nil {
			return nil, err
		}
		got = resp.Results
	}
	// Servers answer best first; put the scores back in the texts' order,
	// and refuse an answer that does not score every text once.
	scores := make([]float64, len(texts))
	seen := make([]bool, len(texts))
	for _, g := range got {
		s := g.Score
		if r.api != "tei" {
			s = g.Rel
		}
		switch {
		case g.Index < 0 || g.Index >= len(texts):
			return nil, fmt.Errorf("%w: %s: POST %s: index %d is outside the %d texts sent", driver.ErrUnavailable, r.http.Name, r.url, g.Index, len(texts))
		case seen[g.Index]:
			return nil, fmt.Errorf("%w: %s: POST %s: text %d is scored twice", driver.ErrUnavailable, r.http.Name, r.url, g.Index)
		case s == nil:
			return nil, fmt.Errorf("%w: %s: POST %s: text %d has no score", driver.ErrUnavailable, r.http.Name, r.url, g.Index)
		}
		seen[g.Index], scores[g.Index] = true, *s
	}
	for i, ok := range seen {
		if !ok {
			return nil, fmt.Errorf("%w: %s: POST %s: text %d of %d is not scored", driver.ErrUnavailable, r.http.Name, r.url, i, len(texts))
		}
	}
	return scores, nil
}

package rerank_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/provider/rerank"
	"github.com/memos-go/memos/core/provider/rerank/reranktest"
)

// score is what the fake servers use as a cross-encoder: the share of the
// query's words found in the text.
func score(query, text string) float64 {
	q := strings.Fields(query)
	n := 0
	for _, w := range q {
		if strings.Contains(text, w) {
			n++
		}
	}
	return float64(n) / float64(len(q))
}

// cohereServer follows Cohere's (and Jina's) POST /v1/rerank: {"model",
// "query","documents","top_n"} → {"results":[{"index","relevance_score"}]},
// sorted by relevance, top_n of them; it wants a bearer key.
func cohereServer(t *testing.T, key string, gotModel *atomic.Value) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/rerank" {
			http.NotFound(w, r)
			return
		}
		if r.Header.Get("Authorization") != "Bearer "+key {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"message":"invalid api token"}`)
			return
		}
		var req struct {
			Model     string   `json:"model"`
			Query     string   `json:"query"`
			Documents []string `json:"documents"`
			TopN      int      `json:"top_n"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model == "" || req.TopN < 1 {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"message":"invalid request: model and top_n are required"}`)
			return
		}
		gotModel.Store(req.Model)
		type hit struct {
			Index int     `json:"index"`
			Rel   float64 `json:"relevance_score"`
		}
		var out []hit
		for i, d := range req.Documents {
			out = append(out, hit{i, score(req.Query, d)})
		}
		// best first, as the API answers
		for i := range out {
			for j := i + 1; j < len(out); j++ {
				if out[j].Rel > out[i].Rel {
					out[i], out[j] = out[j], out[i]
				}
			}
		}
		json.NewEncoder(w).Encode(map[string]any{"id": "x", "results": out[:min(req.TopN, len(out))],
			"meta": map[string]any{"api_version": map[string]string{"version": "1"}}})
	}))
}

var texts = []string{"cats sleep a lot", "dogs and cats play", "the stock market", "dogs bark"}

func TestTEI(t *testing.T) {
	srv := reranktest.NewTEI(score)
	defer srv.Close()
	r, err := rerank.Open(context.Background(), rerank.Config{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.Rerank(context.Background(), "dogs cats", texts)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[0.5 1 0 0.5]" {
		t.Fatalf("scores = %v, want them in the texts' order: [0.5 1 0 0.5]", got)
	}
}

// TestConformance runs the reranker conformance kit against each API shape,
// through fakes that follow the documented requests and answers.
func TestConformance(t *testing.T) {
	t.Run("tei", func(t *testing.T) {
		srv := reranktest.NewTEI(score)
		defer srv.Close()
		r, err := rerank.Open(context.Background(), rerank.Config{BaseURL: srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		reranktest.Run(t, r)
	})
	for _, api := range []string{"cohere", "jina"} {
		t.Run(api, func(t *testing.T) {
			var model atomic.Value
			srv := cohereServer(t, "sekret", &model)
			defer srv.Close()
			t.Setenv("MY_RERANK_KEY", "sekret")
			r, err := rerank.Open(context.Background(), rerank.Config{API: api, BaseURL: srv.URL + "/v1", APIKeyEnv: "MY_RERANK_KEY"})
			if err != nil {
				t.Fatal(err)
			}
			reranktest.Run(t, r)
		})
	}
}

func TestCohereAndJina(t *testing.T) {
	for _, api := range []string{"cohere", "jina"} {
		t.Run(api, func(t *testing.T) {
			var model atomic.Value
			srv := cohereServer(t, "sekret", &model)
			defer srv.Close()
			t.Setenv("MY_RERANK_KEY", "sekret")
			r, err := rerank.Open(context.Background(), rerank.Config{API: api, BaseURL: srv.URL + "/v1", APIKeyEnv: "MY_RERANK_KEY"})
			if err != nil {
				t.Fatal(err)
			}
			got, err := r.Rerank(context.Background(), "dogs cats", texts)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != "[0.5 1 0 0.5]" {
				t.Fatalf("scores = %v, want [0.5 1 0 0.5]", got)
			}
			if want := map[string]string{"cohere": "rerank-english-v3.0", "jina": "jina-reranker-v2-base-multilingual"}[api]; model.Load() != want {
				t.Fatalf("model sent = %q, want the default %q", model, want)
			}

			t.Setenv("MY_RERANK_KEY", "wrong")
			r, err = rerank.Open(context.Background(), rerank.Config{API: api, BaseURL: srv.URL + "/v1", APIKeyEnv: "MY_RERANK_KEY"})
			if err != nil {
				t.Fatal(err)
			}
			_, err = r.Rerank(context.Background(), "dogs", texts)
			if !errors.Is(err, driver.ErrInvalid) || !strings.Contains(err.Error(), "invalid api token") || !strings.Contains(err.Error(), "$MY_RERANK_KEY") ||
				strings.Contains(err.Error(), `{"message"`) {
				t.Fatalf("with a wrong key: %v, want ErrInvalid with the server's message (not its JSON) and the key hint", err)
			}
		})
	}
}

func TestIncompleteAnswersAreRefused(t *testing.T) {
	for name, body := range map[string]string{
		"missing":     `[{"index":0,"score":1}]`,
		"outside":     `[{"index":0,"score":1},{"index":7,"score":1}]`,
		"twice":       `[{"index":0,"score":1},{"index":0,"score":1}]`,
		"no score":    `[{"index":0,"score":1},{"index":1}]`,
		"wrong shape": `{"results":[]}`,
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, body) }))
			defer srv.Close()
			r, err := rerank.Open(context.Background(), rerank.Config{BaseURL: srv.URL, MaxRetries: -1})
			if err != nil {
				t.Fatal(err)
			}
			if got, err := r.Rerank(context.Background(), "q", []string{"a", "b"}); err == nil {
				t.Fatalf("answer %s accepted as %v", body, got)
			}
		})
	}
}

func TestBadConfigIsRefused(t *testing.T) {
	for _, cfg := range []rerank.Config{{API: "openai"}, {BaseURL: "localhost:8080"}, {Timeout: -1}} {
		if _, err := rerank.Open(context.Background(), cfg); !errors.Is(err, driver.ErrInvalid) {
			t.Errorf("open %+v: %v, want ErrInvalid", cfg, err)
		}
	}
	d, err := driver.LookupReranker("http")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := d.NewConfig().(*rerank.Config); !ok {
		t.Fatalf("registered config is %T", d.NewConfig())
	}
}

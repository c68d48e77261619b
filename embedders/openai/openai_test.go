package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/embedtest"
	"github.com/memos-go/memos/embedders/openai"
)

const keyEnv = "MEMOS_TEST_OPENAI_KEY"

// fake is an OpenAI-compatible embeddings server following the documented
// request and response shapes. Its answers are scripted per request; once
// the script is used up it answers normally.
type fake struct {
	t      *testing.T
	dim    int
	mu     sync.Mutex
	reqs   []request
	script []func(w http.ResponseWriter) bool // true: answered, stop
}

type request struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	Dimensions     int      `json:"dimensions"`
	EncodingFormat string   `json:"encoding_format"`
}

// vec is the fake model: a deterministic, unnormalised vector per text.
func vec(s string, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		h := fnv.New32a()
		h.Write([]byte{byte(i)})
		h.Write([]byte(s))
		v[i] = float32(h.Sum32()%1000)/100 - 5
	}
	return v
}

func (f *fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	if r.Header.Get("Authorization") != "Bearer sk-test" {
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"error":{"message":"Incorrect API key provided: sk-wrong.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`))
		return
	}
	var req request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		f.t.Errorf("request body: %v", err)
	}
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	var step func(http.ResponseWriter) bool
	if len(f.script) > 0 {
		step, f.script = f.script[0], f.script[1:]
	}
	f.mu.Unlock()
	if step != nil && step(w) {
		return
	}
	if req.EncodingFormat != "float" {
		f.t.Errorf("encoding_format %q, want float", req.EncodingFormat)
	}
	dim := f.dim
	if req.Dimensions > 0 {
		dim = req.Dimensions
	}
	type datum struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	var data []datum
	for i, s := range req.Input {
		if s == "" {
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"error":{"message":"'$.input' is invalid. Please check the API reference.","type":"invalid_request_error","param":null,"code":null}}`))
			return
		}
		data = append(data, datum{"embedding", i, vec(s, dim)})
	}
	slices.Reverse(data) // clients must order by index
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"object": "list", "data": data, "model": req.Model,
		"usage": map[string]int{"prompt_tokens": 8, "total_tokens": 8},
	})
}

func (f *fake) requests() []request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.reqs)
}

func serve(t *testing.T, f *fake) string {
	t.Helper()
	f.t = t
	if f.dim == 0 {
		f.dim = 12
	}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	t.Setenv(keyEnv, "sk-test")
	return srv.URL + "/v1"
}

func open(t *testing.T, f *fake, cfg openai.Config) *openai.Embedder {
	t.Helper()
	cfg.BaseURL = serve(t, f)
	cfg.APIKeyEnv = keyEnv
	if cfg.Model == "" {
		cfg.Model = "test-model"
	}
	if cfg.Backoff == 0 {
		cfg.Backoff = time.Millisecond
	}
	e, err := openai.Open(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestConformance(t *testing.T) {
	embedtest.Run(t, open(t, &fake{}, openai.Config{Batch: 3}))
}

func TestProbeAndInfo(t *testing.T) {
	f := &fake{dim: 10}
	e := open(t, f, openai.Config{})
	if n := len(f.requests()); n != 1 {
		t.Fatalf("%d requests at open, want 1 probe", n)
	}
	mi, _ := e.Info(t.Context())
	want := driver.ModelInfo{ID: "openai:test-model:10", Dim: 10, MaxBatch: openai.DefaultBatch, Normalized: true}
	if mi != want {
		t.Fatalf("Info = %+v, want %+v", mi, want)
	}
}

func TestDimensionsSentNoProbe(t *testing.T) {
	f := &fake{}
	e := open(t, f, openai.Config{Dimensions: 6})
	if n := len(f.requests()); n != 0 {
		t.Fatalf("%d requests at open, want none", n)
	}
	vs, err := e.Embed(t.Context(), []string{"hello"})
	if err != nil {
		t.Fatal(err)
	}
	if r := f.requests()[0]; r.Dimensions != 6 || r.Model != "test-model" || len(vs[0]) != 6 {
		t.Fatalf("request %+v, vector of %d", r, len(vs[0]))
	}
}

func TestOrderedByIndexAndBatched(t *testing.T) {
	f := &fake{}
	e := open(t, f, openai.Config{Dimensions: 12, Batch: 2})
	texts := []string{"one", "two", "three", "four", "five"}
	vs, err := e.Embed(t.Context(), texts)
	if err != nil {
		t.Fatal(err)
	}
	var sizes []int
	for _, r := range f.requests() {
		sizes = append(sizes, len(r.Input))
	}
	if !slices.Equal(sizes, []int{2, 2, 1}) {
		t.Fatalf("request sizes %v, want [2 2 1]", sizes)
	}
	for i, s := range texts {
		want := vec(s, 12)
		var dot, n float64
		for j := range want {
			dot += float64(want[j]) * float64(vs[i][j])
			n += float64(want[j]) * float64(want[j])
		}
		if dot/sqrt(n) < 0.9999 {
			t.Fatalf("vector %d is not the embedding of %q (cos %.4f)", i, s, dot/sqrt(n))
		}
	}
}

func sqrt(x float64) float64 {
	r := x
	for range 50 {
		r = (r + x/r) / 2
	}
	return r
}

func TestRetryAfter429ThenSuccess(t *testing.T) {
	for _, ra := range []string{"0", time.Now().Add(-time.Minute).UTC().Format(http.TimeFormat)} {
		f := &fake{script: []func(http.ResponseWriter) bool{
			func(w http.ResponseWriter) bool {
				w.Header().Set("Retry-After", ra)
				w.WriteHeader(http.StatusTooManyRequests)
				w.Write([]byte(`{"error":{"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}}`))
				return true
			},
		}}
		// A base backoff of an hour shows that Retry-After, not backoff, set the wait.
		e := open(t, f, openai.Config{Dimensions: 12, Backoff: time.Hour})
		if _, err := e.Embed(t.Context(), []string{"x"}); err != nil {
			t.Fatalf("Retry-After %q: %v", ra, err)
		}
		if n := len(f.requests()); n != 2 {
			t.Fatalf("%d requests, want 2", n)
		}
	}
}

func Test500RetriesExhausted(t *testing.T) {
	always500 := func(w http.ResponseWriter) bool {
		w.WriteHeader(http.StatusInternalServerError)
		w.Write([]byte(`{"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}`))
		return true
	}
	f := &fake{script: []func(http.ResponseWriter) bool{always500, always500, always500, always500}}
	e := open(t, f, openai.Config{Dimensions: 12, MaxRetries: 2})
	_, err := e.Embed(t.Context(), []string{"x"})
	if !errors.Is(err, driver.ErrUnavailable) {
		t.Fatalf("want ErrUnavailable, got %v", err)
	}
	for _, want := range []string{"500", "The server had an error", "server_error", "gave up after 3 attempts"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if n := len(f.requests()); n != 3 {
		t.Fatalf("%d requests, want 3 (1 + 2 retries)", n)
	}
}

func Test4xxNotRetried(t *testing.T) {
	f := &fake{script: []func(http.ResponseWriter) bool{func(w http.ResponseWriter) bool {
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"error":{"message":"This model's maximum context length is 8192 tokens","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}`))
		return true
	}}}
	e := open(t, f, openai.Config{Dimensions: 12})
	_, err := e.Embed(t.Context(), []string{"x"})
	if !errors.Is(err, driver.ErrInvalid) || !strings.Contains(err.Error(), "maximum context length") ||
		!strings.Contains(err.Error(), "context_length_exceeded") {
		t.Fatalf("got %v", err)
	}
	if n := len(f.requests()); n != 1 {
		t.Fatalf("%d requests, want 1: a 400 must not be retried", n)
	}
}

func TestWrongKey(t *testing.T) {
	url := serve(t, &fake{})
	t.Setenv(keyEnv, "sk-wrong")
	e, err := openai.Open(t.Context(), openai.Config{BaseURL: url, APIKeyEnv: keyEnv, Dimensions: 4})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Embed(t.Context(), []string{"x"})
	if !errors.Is(err, driver.ErrInvalid) || !strings.Contains(err.Error(), "Incorrect API key") || !strings.Contains(err.Error(), keyEnv) {
		t.Fatalf("got %v", err)
	}
}

func TestNoKeyForOpenAI(t *testing.T) {
	t.Setenv(keyEnv, "")
	_, err := openai.Open(t.Context(), openai.Config{APIKeyEnv: keyEnv})
	if !errors.Is(err, driver.ErrInvalid) || !strings.Contains(err.Error(), keyEnv) {
		t.Fatalf("got %v", err)
	}
}

func TestBadBaseURL(t *testing.T) {
	_, err := openai.Open(t.Context(), openai.Config{BaseURL: "localhost:8080"})
	if !errors.Is(err, driver.ErrInvalid) {
		t.Fatalf("got %v", err)
	}
}

func TestServerDown(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL + "/v1"
	srv.Close()
	_, err := openai.Open(t.Context(), openai.Config{BaseURL: url, Model: "m", MaxRetries: -1})
	if !errors.Is(err, driver.ErrUnavailable) {
		t.Fatalf("got %v", err)
	}
}

func TestCancelWhileWaitingToRetry(t *testing.T) {
	seen := make(chan struct{}, 10)
	limited := func(w http.ResponseWriter) bool {
		seen <- struct{}{}
		w.Header().Set("Retry-After", "50")
		w.WriteHeader(http.StatusTooManyRequests)
		w.Write([]byte(`{"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}}`))
		return true
	}
	f := &fake{script: []func(http.ResponseWriter) bool{limited, limited}}
	e := open(t, f, openai.Config{Dimensions: 12})
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() { _, err := e.Embed(ctx, []string{"x"}); errc <- err }()
	<-seen
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
}

func TestRetryAfterTooLong(t *testing.T) {
	f := &fake{script: []func(http.ResponseWriter) bool{func(w http.ResponseWriter) bool {
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(http.StatusServiceUnavailable)
		return true
	}}}
	e := open(t, f, openai.Config{Dimensions: 12})
	_, err := e.Embed(t.Context(), []string{"x"})
	if !errors.Is(err, driver.ErrUnavailable) || !strings.Contains(err.Error(), "asks to wait 1h0m0s") {
		t.Fatalf("got %v", err)
	}
}

func TestRegistered(t *testing.T) {
	url := serve(t, &fake{})
	d, err := driver.LookupEmbedder(openai.Name)
	if err != nil {
		t.Fatal(err)
	}
	cfg := d.NewConfig().(*openai.Config)
	cfg.BaseURL, cfg.APIKeyEnv, cfg.Dimensions = url, keyEnv, 5
	e, err := d.Open(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if mi, _ := e.Info(t.Context()); mi.Dim != 5 {
		t.Fatalf("Info %+v", mi)
	}
}

package ollama_test

import (
	"encoding/json"
	"errors"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/embedtest"
	"github.com/memos-go/memos/embedders/ollama"
)

// fake follows Ollama's documented /api/embed shapes: {model, input,
// keep_alive, truncate} in, {model, embeddings, ...} out, {"error": "..."}
// with a 4xx/5xx status on failure.
type fake struct {
	t    *testing.T
	dim  int
	fail func(w http.ResponseWriter) bool
	mu   sync.Mutex
	reqs []map[string]any
}

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
	if r.Method != http.MethodPost || r.URL.Path != "/api/embed" {
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte("404 page not found"))
		return
	}
	var req map[string]any
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		f.t.Errorf("request body: %v", err)
	}
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	f.mu.Unlock()
	if f.fail != nil && f.fail(w) {
		return
	}
	if req["model"] != "all-minilm" {
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"error":"model \"` + req["model"].(string) + `\" not found, try pulling it first"}`))
		return
	}
	var out [][]float32
	for _, s := range req["input"].([]any) {
		if s == "" {
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"error":"input is empty"}`))
			return
		}
		out = append(out, vec(s.(string), f.dim))
	}
	json.NewEncoder(w).Encode(map[string]any{
		"model": req["model"], "embeddings": out,
		"total_duration": 14143917, "load_duration": 1019500, "prompt_eval_count": 8,
	})
}

func (f *fake) requests() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.reqs)
}

func open(t *testing.T, f *fake, cfg ollama.Config) *ollama.Embedder {
	t.Helper()
	f.t = t
	if f.dim == 0 {
		f.dim = 12
	}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	cfg.BaseURL = srv.URL
	if cfg.Model == "" {
		cfg.Model = "all-minilm"
	}
	e, err := ollama.Open(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestConformance(t *testing.T) {
	embedtest.Run(t, open(t, &fake{}, ollama.Config{Batch: 3}))
}

func TestProbeAndRequestShape(t *testing.T) {
	f := &fake{dim: 9}
	no := false
	e := open(t, f, ollama.Config{KeepAlive: "10m", Truncate: &no, Batch: 2})
	mi, _ := e.Info(t.Context())
	if want := (driver.ModelInfo{ID: "ollama:all-minilm:9", Dim: 9, MaxBatch: 2, Normalized: true}); mi != want {
		t.Fatalf("Info = %+v, want %+v", mi, want)
	}
	if _, err := e.Embed(t.Context(), []string{"a", "b", "c"}); err != nil {
		t.Fatal(err)
	}
	reqs := f.requests()
	if len(reqs) != 3 { // probe + two batches
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	r := reqs[1]
	if r["keep_alive"] != "10m" || r["truncate"] != false || len(r["input"].([]any)) != 2 {
		t.Fatalf("request %v", r)
	}
}

func TestDimGivenNoProbe(t *testing.T) {
	f := &fake{}
	e := open(t, f, ollama.Config{Dim: 12})
	if n := len(f.requests()); n != 0 {
		t.Fatalf("%d requests at open with dim set", n)
	}
	if _, err := e.Embed(t.Context(), []string{"x"}); err != nil {
		t.Fatal(err)
	}
	r := f.requests()[0]
	for _, k := range []string{"truncate", "keep_alive"} {
		if _, ok := r[k]; ok {
			t.Errorf("%s sent although unset: %v", k, r)
		}
	}
}

func TestDimMismatch(t *testing.T) {
	e := open(t, &fake{}, ollama.Config{Dim: 7})
	_, err := e.Embed(t.Context(), []string{"x"})
	if !errors.Is(err, driver.ErrDimensionMismatch) {
		t.Fatalf("got %v", err)
	}
}

func TestModelNotFound(t *testing.T) {
	srv := httptest.NewServer(&fake{t: t, dim: 4})
	defer srv.Close()
	_, err := ollama.Open(t.Context(), ollama.Config{BaseURL: srv.URL, Model: "nope"})
	if !errors.Is(err, driver.ErrInvalid) || !strings.Contains(err.Error(), `model "nope" not found`) ||
		!strings.Contains(err.Error(), "ollama pull nope") {
		t.Fatalf("got %v", err)
	}
}

func TestServerError(t *testing.T) {
	f := &fake{}
	e := open(t, f, ollama.Config{Dim: 12})
	f.fail = func(w http.ResponseWriter) bool {
		w.WriteHeader(http.StatusInternalServerError)
		w.Write([]byte(`{"error":"llama runner process has terminated"}`))
		return true
	}
	_, err := e.Embed(t.Context(), []string{"x"})
	if !errors.Is(err, driver.ErrUnavailable) || !strings.Contains(err.Error(), "llama runner process has terminated") {
		t.Fatalf("got %v", err)
	}
}

func TestServerDown(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	_, err := ollama.Open(t.Context(), ollama.Config{BaseURL: url})
	if !errors.Is(err, driver.ErrUnavailable) || !strings.Contains(err.Error(), "ollama serve") {
		t.Fatalf("got %v", err)
	}
}

func TestRegistered(t *testing.T) {
	f := &fake{t: t, dim: 3}
	srv := httptest.NewServer(f)
	defer srv.Close()
	d, err := driver.LookupEmbedder(ollama.Name)
	if err != nil {
		t.Fatal(err)
	}
	cfg := d.NewConfig().(*ollama.Config)
	cfg.BaseURL, cfg.Model = srv.URL, "all-minilm"
	e, err := d.Open(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if mi, _ := e.Info(t.Context()); mi.Dim != 3 {
		t.Fatalf("Info %+v", mi)
	}
}

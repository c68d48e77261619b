package reranktest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
)

// TEI is a fake of Hugging Face text-embeddings-inference's rerank API, for
// the tests of what uses a reranker through it (the http reranker's "tei"
// API): POST /rerank with {"query", "texts", ...} is answered with
// [{"index", "score"}] — in reverse order of the texts, since the server
// sorts by score and a client must go by index — where Score gives each
// text's score. An empty query or text list gets 422 and a validation
// error, as the server does. From the call FailFrom sets on, every call
// gets 424 {"error": "inference failed", "error_type": "Backend"}, the
// server's answer when its model fails (not retried: not a 429 or 5xx).
// Close it when done (httptest.Server).
type TEI struct {
	*httptest.Server
	score    func(query, text string) float64
	calls    atomic.Int64
	failFrom atomic.Int64
}

// NewTEI starts a fake text-embeddings-inference server on loopback that
// scores with score.
func NewTEI(score func(query, text string) float64) *TEI {
	f := &TEI{score: score}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	return f
}

// Calls is how many requests the server has had.
func (f *TEI) Calls() int64 { return f.calls.Load() }

// FailFrom makes the n-th call and every later one fail (counting from 1,
// over the server's life); n ≤ 0 makes none fail.
func (f *TEI) FailFrom(n int64) { f.failFrom.Store(n) }

func (f *TEI) serve(w http.ResponseWriter, r *http.Request) {
	n := f.calls.Add(1)
	w.Header().Set("Content-Type", "application/json")
	if r.Method != http.MethodPost || r.URL.Path != "/rerank" {
		w.WriteHeader(http.StatusNotFound)
		json.NewEncoder(w).Encode(map[string]string{"error": "not found", "error_type": "Validation"})
		return
	}
	if from := f.failFrom.Load(); from > 0 && n >= from {
		w.WriteHeader(http.StatusFailedDependency)
		json.NewEncoder(w).Encode(map[string]string{"error": "inference failed", "error_type": "Backend"})
		return
	}
	var req struct {
		Query string   `json:"query"`
		Texts []string `json:"texts"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Query == "" || len(req.Texts) == 0 {
		w.WriteHeader(http.StatusUnprocessableEntity)
		json.NewEncoder(w).Encode(map[string]string{"error": "Input validation error: `texts` cannot be empty", "error_type": "Validation"})
		return
	}
	type hit struct {
		Index int     `json:"index"`
		Score float64 `json:"score"`
	}
	out := make([]hit, 0, len(req.Texts))
	for i := len(req.Texts) - 1; i >= 0; i-- {
		out = append(out, hit{i, f.score(req.Query, req.Texts[i])})
	}
	json.NewEncoder(w).Encode(out)
}

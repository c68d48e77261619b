package evaldata

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestEmbedderFromConfig: an embedder other than hash and wordvec is opened
// with its settings from the memos configuration, as memos bench does —
// here ollama from MEMOS_EMBEDDER__OLLAMA__* against a fake of Ollama's
// POST /api/embed ({"model", "input"} → {"model", "embeddings"}).
func TestEmbedderFromConfig(t *testing.T) {
	var model string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if r.URL.Path != "/api/embed" || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, `{"error":"bad request"}`, http.StatusBadRequest)
			return
		}
		model = req.Model
		out := make([][]float32, len(req.Input))
		for i, s := range req.Input {
			out[i] = []float32{float32(len(s)), 1, 0.5}
		}
		json.NewEncoder(w).Encode(map[string]any{"model": req.Model, "embeddings": out})
	}))
	defer srv.Close()
	t.Setenv("MEMOS_HOME", t.TempDir())
	t.Setenv("MEMOS_EMBEDDER__OLLAMA__BASE_URL", srv.URL)
	t.Setenv("MEMOS_EMBEDDER__OLLAMA__MODEL", "tiny-embed")
	ctx := context.Background()
	e, err := Embedder(ctx, "", "ollama")
	if err != nil {
		t.Fatal(err)
	}
	vs, err := e.Embed(ctx, []string{"hello"})
	if err != nil || len(vs) != 1 || len(vs[0]) != 3 || model != "tiny-embed" {
		t.Fatalf("embed: %v, %v (model asked %q)", vs, err, model)
	}
	if _, err := Embedder(ctx, "", "nope"); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("unknown embedder: %v", err)
	}
	t.Setenv("MEMOS_EMBEDDER__OLLAMA__DIM", "many")
	if _, err := Embedder(ctx, "", "ollama"); err == nil || !strings.Contains(err.Error(), "dim") {
		t.Errorf("a bad setting: %v; want an error naming it", err)
	}
}

package summarize

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/memos-go/memos/core/driver"
)

var items = []driver.SummaryItem{
	{ID: 3, Content: "Alice's home lab runs Proxmox on three nodes. It sits in the basement."},
	{ID: 5, Content: "Alice's home lab runs Proxmox on old Dell nodes."},
	{ID: 8, Content: "Alice backs up the home lab nodes to a NAS every night."},
	{ID: 9, Content: "Bob likes cellos."},
}

func TestExtractive(t *testing.T) {
	x, err := OpenExtractive(context.Background(), ExtractiveConfig{Sentences: 3})
	if err != nil {
		t.Fatal(err)
	}
	page, err := x.Summarize(context.Background(), items)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(page, "\n")
	if len(lines) != 3 || !strings.HasSuffix(lines[0], "[#3]") || strings.Contains(page, "cellos") {
		t.Fatalf("page:\n%s", page)
	}
	again, _ := x.Summarize(context.Background(), items)
	if again != page {
		t.Fatal("two summaries of the same items differ")
	}
	if _, err := OpenExtractive(context.Background(), ExtractiveConfig{Lambda: 2}); err == nil {
		t.Fatal("lambda 2 was accepted")
	}
}

// The fakes follow the OpenAI chat completions and Ollama /api/chat shapes.
func TestLLM(t *testing.T) {
	for _, api := range []string{"openai", "ollama"} {
		t.Run(api, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var req struct {
					Messages []struct{ Role, Content string } `json:"messages"`
				}
				if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) != 2 ||
					!strings.Contains(req.Messages[1].Content, "[#5] Alice's home lab runs Proxmox on old Dell nodes.") {
					t.Errorf("request: %+v %v", req, err)
				}
				content := `{"page":"- Alice's home lab runs Proxmox on three old Dell nodes [#3, #5]"}`
				if api == "ollama" {
					json.NewEncoder(w).Encode(map[string]any{"done": true, "message": map[string]any{"role": "assistant", "content": content}})
					return
				}
				json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
					"message": map[string]any{"role": "assistant", "content": content}}}})
			}))
			defer srv.Close()
			base := srv.URL
			if api == "openai" {
				base += "/v1"
			}
			x, err := OpenLLM(context.Background(), LLMConfig{API: api, BaseURL: base})
			if err != nil {
				t.Fatal(err)
			}
			page, err := x.Summarize(context.Background(), items)
			if err != nil || !strings.Contains(page, "[#3, #5]") {
				t.Fatalf("page %q, %v", page, err)
			}
		})
	}
}

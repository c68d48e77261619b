package extract

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memos-go/memos/core/driver"
)

var convo = []driver.Turn{
	{Speaker: "Caroline", Text: "I went to the LGBTQ support group yesterday.", Time: time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC)},
	{Speaker: "Melanie", Text: "Wow! I love painting, by the way."},
}

// answer is what the fake model returns: one good memory, and ones the
// extractor must drop (unknown type, a turn out of range, no content).
const answer = `{"memories":[
 {"content":"Caroline went to the LGBTQ support group on 7 May 2023.","type":"event","entities":["Caroline"],"significance":6,"emotional_context":"","turns":[0]},
 {"content":"Melanie loves painting.","type":"preference","entities":["Melanie"],"significance":14,"emotional_context":"","turns":[1,7]},
 {"content":"x","type":"lesson","entities":[],"significance":3,"emotional_context":"","turns":[0]},
 {"content":"Nobody said this.","type":"fact","entities":[],"significance":3,"emotional_context":"","turns":[9]},
 {"content":" ","type":"fact","entities":[],"significance":3,"emotional_context":"","turns":[0]}
]}`

func checkExtractions(t *testing.T, got []driver.Extraction) {
	t.Helper()
	if len(got) != 2 || got[0].Type != driver.TypeEvent || got[1].Significance != 10 || len(got[1].Turns) != 1 || got[1].Turns[0] != 1 {
		t.Fatalf("extractions %+v", got)
	}
}

// TestLLMOpenAI follows the chat completions API: POST /chat/completions
// with model, messages, temperature and response_format json_schema; the
// answer in choices[0].message.content.
func TestLLMOpenAI(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "0")
			http.Error(w, `{"error":{"message":"Rate limit reached","type":"requests"}}`, http.StatusTooManyRequests)
			return
		}
		if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer sk-test" {
			t.Errorf("request %s with auth %q", r.URL.Path, r.Header.Get("Authorization"))
		}
		var req struct {
			Model          string `json:"model"`
			Messages       []struct{ Role, Content string }
			Temperature    *float64 `json:"temperature"`
			ResponseFormat struct {
				Type       string `json:"type"`
				JSONSchema struct {
					Name   string          `json:"name"`
					Strict bool            `json:"strict"`
					Schema json.RawMessage `json:"schema"`
				} `json:"json_schema"`
			} `json:"response_format"`
		}
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &req); err != nil {
			t.Errorf("body: %v", err)
		}
		if req.Model != "gpt-test" || len(req.Messages) != 2 || req.Messages[0].Role != "system" ||
			!strings.Contains(req.Messages[1].Content, "[0] Caroline (2023-05-08): I went to the LGBTQ support group yesterday.") ||
			req.Temperature == nil || *req.Temperature != 0 || req.ResponseFormat.Type != "json_schema" ||
			!req.ResponseFormat.JSONSchema.Strict || !json.Valid(req.ResponseFormat.JSONSchema.Schema) {
			t.Errorf("request %s", body)
		}
		json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-test",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": answer}}},
		})
	}))
	defer srv.Close()
	t.Setenv("TEST_KEY", "sk-test")
	x, err := OpenLLM(context.Background(), LLMConfig{BaseURL: srv.URL + "/v1", Model: "gpt-test", APIKeyEnv: "TEST_KEY"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := x.Extract(context.Background(), convo)
	if err != nil {
		t.Fatal(err)
	}
	checkExtractions(t, got)
	if calls.Load() != 2 {
		t.Fatalf("%d calls, want a retry after the 429", calls.Load())
	}
}

// TestLLMOllama follows Ollama's /api/chat: stream false, format set to the
// schema, the answer in message.content.
func TestLLMOllama(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model    string          `json:"model"`
			Stream   *bool           `json:"stream"`
			Format   json.RawMessage `json:"format"`
			Messages []struct{ Role, Content string }
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || r.URL.Path != "/api/chat" ||
			req.Stream == nil || *req.Stream || !strings.Contains(string(req.Format), `"memories"`) || req.Model != "llama3.1" {
			t.Errorf("request %s %+v %v", r.URL.Path, req, err)
		}
		json.NewEncoder(w).Encode(map[string]any{"model": "llama3.1", "done": true,
			"message": map[string]any{"role": "assistant", "content": answer}})
	}))
	defer srv.Close()
	x, err := OpenLLM(context.Background(), LLMConfig{API: "ollama", BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	got, err := x.Extract(context.Background(), convo)
	if err != nil {
		t.Fatal(err)
	}
	checkExtractions(t, got)
}

func TestLLMErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := OpenLLM(ctx, LLMConfig{API: "bard"}); !errors.Is(err, driver.ErrInvalid) {
		t.Fatalf("unknown api: %v", err)
	}
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/api/chat") {
			json.NewEncoder(w).Encode(map[string]any{"message": map[string]any{"role": "assistant", "content": "Sure! Here are the memories:"}})
			return
		}
		http.Error(w, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`, http.StatusUnauthorized)
	}))
	defer bad.Close()
	x, _ := OpenLLM(ctx, LLMConfig{BaseURL: bad.URL})
	if _, err := x.Extract(ctx, convo); !errors.Is(err, driver.ErrInvalid) || !strings.Contains(err.Error(), "Incorrect API key") || !strings.Contains(err.Error(), "$OPENAI_API_KEY") {
		t.Fatalf("401: %v", err)
	}
	x, _ = OpenLLM(ctx, LLMConfig{API: "ollama", BaseURL: bad.URL})
	if _, err := x.Extract(ctx, convo); err == nil || !strings.Contains(err.Error(), "not JSON") {
		t.Fatalf("prose instead of JSON: %v", err)
	}
	// A server that never answers hits the timeout, retried, then unavailable.
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer slow.Close()
	defer close(release)
	x, _ = OpenLLM(ctx, LLMConfig{API: "ollama", BaseURL: slow.URL, Timeout: 50 * time.Millisecond, MaxRetries: -1})
	if _, err := x.Extract(ctx, convo); !errors.Is(err, driver.ErrUnavailable) || !strings.Contains(err.Error(), "timeout") {
		t.Fatalf("timeout: %v", err)
	}
}

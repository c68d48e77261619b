package summarize

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/provider/llm"
)

// LLMName is the LLM summarizer's registered name.
const LLMName = "llm"

// LLMConfig configures LLM: which chat model to ask (the fields of
// llm.Config).
type LLMConfig struct {
	// API is "openai" (any OpenAI-compatible server; the default) or "ollama".
	API string `koanf:"api"`
	// BaseURL is the server: default https://api.openai.com/v1 for openai,
	// http://localhost:11434 for ollama.
	BaseURL string `koanf:"base_url"`
	// Model names the chat model (default gpt-4o-mini; llama3.1 for ollama).
	Model string `koanf:"model"`
	// APIKeyEnv names the environment variable holding the key (openai;
	// default OPENAI_API_KEY). A local server may need none.
	APIKeyEnv string `koanf:"api_key_env"`
	// Timeout bounds one request (default 120s); MaxRetries how often a 429,
	// 5xx or network failure is retried (default 3; negative: never).
	Timeout    time.Duration `koanf:"timeout"`
	MaxRetries int           `koanf:"max_retries"`
}

// LLM asks a chat model to write the page, citing members as [#id].
type LLM struct{ c *llm.Client }

var _ driver.Summarizer = (*LLM)(nil)

const llmPrompt = `You write knowledge pages for an AI agent's long-term memory. A page is a short, stable
note that stands in for several related memories. Given numbered memories, write at most eight
bullet points ("- ...") that keep every fact, date, name and number the memories agree on, merge
what they repeat, and note where they disagree. End each bullet with the ids it rests on, as
[#12] or [#12, #15]. Do not invent anything the memories do not say.`

var llmSchema = json.RawMessage(`{"type":"object","properties":{"page":{"type":"string"}},"required":["page"],"additionalProperties":false}`)

func init() {
	driver.RegisterSummarizer(LLMName, driver.NewSummarizerDriver(LLMName, OpenLLM))
}

// OpenLLM returns an LLM summarizer; it does not contact the server.
func OpenLLM(_ context.Context, cfg LLMConfig) (*LLM, error) {
	c, err := llm.New("summarizer llm", llm.Config{API: cfg.API, BaseURL: cfg.BaseURL, Model: cfg.Model,
		APIKeyEnv: cfg.APIKeyEnv, Timeout: cfg.Timeout, MaxRetries: cfg.MaxRetries})
	if err != nil {
		return nil, err
	}
	return &LLM{c: c}, nil
}

// Summarize implements driver.Summarizer.
func (x *LLM) Summarize(ctx context.Context, items []driver.SummaryItem) (string, error) {
	if len(items) == 0 {
		return "", driver.Invalidf("summarize: no items")
	}
	var b strings.Builder
	for _, it := range items {
		fmt.Fprintf(&b, "[#%d] %s\n", it.ID, strings.Join(strings.Fields(it.Content), " "))
	}
	var ans struct {
		Page string `json:"page"`
	}
	if err := x.c.JSON(ctx, llmPrompt, b.String(), "page", llmSchema, &ans); err != nil {
		return "", err
	}
	page := strings.TrimSpace(ans.Page)
	if page == "" {
		return "", fmt.Errorf("summarizer llm: the model wrote an empty page")
	}
	return page, nil
}

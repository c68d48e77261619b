package extract

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/provider/llm"
)

// LLMName is the LLM extractor's registered name.
const LLMName = "llm"

// LLMConfig configures LLM: which chat model to ask (the fields of
// llm.Config), and how many turns go into one request.
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
	// Window is the most turns one request carries (default 40); a longer
	// conversation is sent in consecutive windows.
	Window int `koanf:"window"`
}

// LLM asks a chat model for the memories in a conversation, with the prompt
// in llm_prompt.txt and the JSON schema in llm_schema.json. Answers are
// checked: memories with an unknown type, no content or no valid turn are
// dropped; significance is clamped to 1–10.
type LLM struct {
	c      *llm.Client
	window int
}

var _ driver.Extractor = (*LLM)(nil)

//go:embed llm_prompt.txt
var llmPrompt string

//go:embed llm_schema.json
var llmSchema []byte

func init() {
	driver.RegisterExtractor(LLMName, driver.NewExtractorDriver(LLMName, OpenLLM))
}

// OpenLLM returns an LLM extractor; it does not contact the server.
func OpenLLM(_ context.Context, cfg LLMConfig) (*LLM, error) {
	if cfg.Window < 0 {
		return nil, driver.Invalidf("extractor llm: window %d is negative", cfg.Window)
	}
	if cfg.Window == 0 {
		cfg.Window = 40
	}
	c, err := llm.New("extractor llm", llm.Config{API: cfg.API, BaseURL: cfg.BaseURL, Model: cfg.Model,
		APIKeyEnv: cfg.APIKeyEnv, Timeout: cfg.Timeout, MaxRetries: cfg.MaxRetries})
	if err != nil {
		return nil, err
	}
	return &LLM{c: c, window: cfg.Window}, nil
}

// Extract implements driver.Extractor.
func (x *LLM) Extract(ctx context.Context, turns []driver.Turn) ([]driver.Extraction, error) {
	var out []driver.Extraction
	for start := 0; start < len(turns); start += x.window {
		win := turns[start:min(start+x.window, len(turns))]
		var b strings.Builder
		for i, t := range win {
			fmt.Fprintf(&b, "[%d] ", i)
			if t.Speaker != "" {
				b.WriteString(t.Speaker)
			} else {
				b.WriteString("Speaker")
			}
			if !t.Time.IsZero() {
				fmt.Fprintf(&b, " (%s)", t.Time.UTC().Format(time.DateOnly))
			}
			b.WriteString(": ")
			b.WriteString(t.Text)
			b.WriteByte('\n')
		}
		var ans struct {
			Memories []driver.Extraction `json:"memories"`
		}
		if err := x.c.JSON(ctx, llmPrompt, b.String(), "memories", json.RawMessage(llmSchema), &ans); err != nil {
			return nil, err
		}
		for _, m := range ans.Memories {
			if m, ok := clean(m, len(win)); ok {
				for k := range m.Turns {
					m.Turns[k] += start
				}
				out = append(out, m)
			}
		}
	}
	return out, nil
}

// clean checks one proposed memory against n turns.
func clean(m driver.Extraction, n int) (driver.Extraction, bool) {
	m.Content = strings.TrimSpace(m.Content)
	if m.Content == "" || !utf8.ValidString(m.Content) || len(m.Content) > driver.MaxContentBytes {
		return m, false
	}
	switch m.Type {
	case driver.TypeFact, driver.TypePreference, driver.TypeEvent, driver.TypeRelationship:
	default:
		return m, false
	}
	var turns []int
	for _, t := range m.Turns {
		if t >= 0 && t < n {
			turns = append(turns, t)
		}
	}
	if len(turns) == 0 {
		return m, false
	}
	m.Turns = turns
	m.Significance = min(max(m.Significance, 1), 10)
	return m, true
}

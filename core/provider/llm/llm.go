// Package llm asks a chat model for an answer in JSON that follows a
// schema, over the two APIs memos' LLM providers speak: the OpenAI chat
// completions API (OpenAI and every compatible server: vLLM, llama.cpp,
// LM Studio, Together, …) with response_format json_schema, and Ollama's
// /api/chat with format set to the schema. The extractor and the
// summarizer build on it; both send temperature 0 so that answers are as
// repeatable as the server allows.
package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/retryhttp"
)

// Config selects a chat model. The zero value asks OpenAI's gpt-4o-mini
// with the key in $OPENAI_API_KEY.
type Config struct {
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

// Client asks one chat model. It is safe for concurrent use.
type Client struct {
	api, url, model string
	http            *retryhttp.Client
}

// New checks cfg and returns a client. It does not contact the server.
func New(name string, cfg Config) (*Client, error) {
	if cfg.API == "" {
		cfg.API = "openai"
	}
	c := &Client{api: cfg.API, model: cfg.Model}
	hc := &retryhttp.Client{Name: name, Timeout: cfg.Timeout, MaxRetries: cfg.MaxRetries, Header: http.Header{}}
	if hc.Timeout == 0 {
		hc.Timeout = 120 * time.Second
	}
	switch cfg.API {
	case "openai":
		base := cfg.BaseURL
		if base == "" {
			base = "https://api.openai.com/v1"
		}
		if c.model == "" {
			c.model = "gpt-4o-mini"
		}
		c.url = strings.TrimRight(base, "/") + "/chat/completions"
		env := cfg.APIKeyEnv
		if env == "" {
			env = "OPENAI_API_KEY"
		}
		if key := os.Getenv(env); key != "" {
			hc.Header.Set("Authorization", "Bearer "+key)
		}
		hc.KeyHint = "check the key in $" + env
	case "ollama":
		base := cfg.BaseURL
		if base == "" {
			base = "http://localhost:11434"
		}
		if c.model == "" {
			c.model = "llama3.1"
		}
		c.url = strings.TrimRight(base, "/") + "/api/chat"
	default:
		return nil, driver.Invalidf("%s: api %q is not known (want openai or ollama)", name, cfg.API)
	}
	if cfg.Timeout < 0 {
		return nil, driver.Invalidf("%s: timeout %v is negative", name, cfg.Timeout)
	}
	c.http = hc
	return c, nil
}

// Model names the model the client asks.
func (c *Client) Model() string { return c.api + ":" + c.model }

type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// JSON asks the model with a system and a user message for an answer that
// follows schema (a JSON Schema object named name) and decodes it into out.
func (c *Client) JSON(ctx context.Context, system, user, name string, schema json.RawMessage, out any) error {
	msgs := []message{{"system", system}, {"user", user}}
	var content string
	switch c.api {
	case "openai":
		type jsonSchema struct {
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
			Strict bool            `json:"strict"`
		}
		req := struct {
			Model          string    `json:"model"`
			Messages       []message `json:"messages"`
			Temperature    float64   `json:"temperature"`
			ResponseFormat struct {
				Type       string     `json:"type"`
				JSONSchema jsonSchema `json:"json_schema"`
			} `json:"response_format"`
		}{Model: c.model, Messages: msgs}
		req.ResponseFormat.Type = "json_schema"
		req.ResponseFormat.JSONSchema = jsonSchema{Name: name, Schema: schema, Strict: true}
		var resp struct {
			Choices []struct {
				Message struct {
					Content string `json:"content"`
					Refusal string `json:"refusal"`
				} `json:"message"`
				FinishReason string `json:"finish_reason"`
			} `json:"choices"`
		}
		if err := c.http.PostJSON(ctx, c.url, req, &resp); err != nil {
			return err
		}
		if len(resp.Choices) == 0 {
			return fmt.Errorf("%s: POST %s: the answer has no choices", c.http.Name, c.url)
		}
		ch := resp.Choices[0]
		if ch.Message.Refusal != "" {
			return fmt.Errorf("%w: %s: the model refused: %s", driver.ErrInvalid, c.http.Name, ch.Message.Refusal)
		}
		if ch.FinishReason == "length" {
			return fmt.Errorf("%s: the model's answer was cut off at its length limit", c.http.Name)
		}
		content = ch.Message.Content
	case "ollama":
		req := struct {
			Model    string          `json:"model"`
			Messages []message       `json:"messages"`
			Stream   bool            `json:"stream"`
			Format   json.RawMessage `json:"format"`
			Options  map[string]any  `json:"options"`
		}{Model: c.model, Messages: msgs, Format: schema, Options: map[string]any{"temperature": 0}}
		var resp struct {
			Message message `json:"message"`
			Done    bool    `json:"done"`
		}
		if err := c.http.PostJSON(ctx, c.url, req, &resp); err != nil {
			return err
		}
		content = resp.Message.Content
	}
	if err := json.Unmarshal([]byte(content), out); err != nil {
		return fmt.Errorf("%s: the model's answer is not JSON of the requested shape: %v", c.http.Name, err)
	}
	return nil
}

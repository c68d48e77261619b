package config

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/memos-go/memos/core"
)

// TestServerSection checks the server section: typed decoding, MEMOS_TOKEN,
// strict keys (also inside a token) and secrets hidden from config show.
func TestServerSection(t *testing.T) {
	cfg, err := load(t, `
server:
  addr: 0.0.0.0:9000
  timeout: 5s
  cors_origins: [https://app.example]
  tokens:
    - name: agent-a
      token: file-token-0123456789
      namespaces: [agent:a]
`, "MEMOS_TOKEN=env-token-0123456789", "MEMOS_SERVER__MAX_BODY=2048")
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Server
	if s.Addr != "0.0.0.0:9000" || s.Timeout != 5*time.Second || s.MaxBody != 2048 || len(s.CORSOrigins) != 1 || !s.Console {
		t.Errorf("server: %+v", s)
	}
	if len(s.Tokens) != 2 || s.Tokens[0].Name != "agent-a" || s.Tokens[0].Namespaces[0] != "agent:a" ||
		s.Tokens[1].Token != "env-token-0123456789" || s.Tokens[1].Namespaces != nil {
		t.Errorf("tokens: %+v", s.Tokens)
	}
	for _, v := range cfg.Values {
		if strings.Contains(strings.ToLower(v.Key), "token") && v.Value != "********" {
			t.Errorf("config show would print %s = %v", v.Key, v.Value)
		}
	}
	if cfg, err := load(t, "server:\n  console: false\n"); err != nil {
		t.Error(err)
	} else if cfg.Server.Console {
		t.Error("server.console: false left the console on")
	}
	for yaml, want := range map[string]string{
		"server:\n  adr: x\n":                 `unknown key "server.adr"`,
		"server:\n  tokens:\n    - tokn: x\n": `unknown key "server.tokens[0].tokn"`,
		"server:\n  timeout: soon\n":          "want a duration",
		"server: 7077\n":                      "section of settings",
	} {
		_, err := load(t, yaml)
		if !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v; want %q", yaml, err, want)
		}
	}
}

package config

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/core/driver"
	_ "github.com/memos-go/memos/core/provider/extract"
	_ "github.com/memos-go/memos/core/provider/summarize"
	_ "github.com/memos-go/memos/core/vector"
)

// fakeConfig exercises the shapes driver configs use: nested structs,
// pointers, maps, lists, durations, untagged fields and secrets.
type fakeConfig struct {
	Path        string `koanf:"path"`
	BusyTimeout time.Duration
	Retry       *bool             `koanf:"retry"`
	Headers     map[string]string `koanf:"headers"`
	Args        []string          `koanf:"args"`
	APIKey      string            `koanf:"api_key"`
	Pool        struct {
		Size int `koanf:"size"`
	} `koanf:"pool"`
	Hook func() `koanf:"-"`
}

func init() {
	driver.RegisterBackend("fake", core.BackendDriver{
		NewConfig: func() any { return new(fakeConfig) },
		Open: func(context.Context, any) (core.Backend, error) {
			return nil, errors.New("the fake backend does not open")
		},
		DefaultPath: "fake.db",
	})
	driver.RegisterEmbedder("hash", core.EmbedderDriver{
		NewConfig: func() any { return new(struct{ Dim int }) },
		Open: func(context.Context, any) (core.Embedder, error) {
			return nil, errors.New("the fake embedder does not open")
		},
	})
}

func load(t *testing.T, yaml string, env ...string) (*Config, error) {
	t.Helper()
	home := t.TempDir()
	if yaml != "" {
		if err := os.WriteFile(filepath.Join(home, FileName), []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return Load(Options{Env: append([]string{"MEMOS_HOME=" + home, "MEMOS_BACKEND=fake"}, env...)})
}

func TestDecodeShapes(t *testing.T) {
	cfg, err := load(t, `
backends:
  fake:
    path: data/x.db
    busytimeout: 3s
    retry: false
    headers: {X-Team: memos, Authorization-Token: abc}
    args: [a, b]
    api_key: sk-123
    pool:
      size: 4
`, "MEMOS_BACKENDS__FAKE__POOL__SIZE=8")
	if err != nil {
		t.Fatal(err)
	}
	fc := cfg.BackendConfig.(*fakeConfig)
	if fc.Path != filepath.Join(cfg.Home, "data/x.db") || fc.BusyTimeout != 3*time.Second || fc.Retry == nil || *fc.Retry ||
		fc.Headers["X-Team"] != "memos" || len(fc.Args) != 2 || fc.APIKey != "sk-123" || fc.Pool.Size != 8 {
		t.Errorf("decoded %+v", fc)
	}
	shown := map[string]Value{}
	for _, v := range cfg.Values {
		shown[v.Key] = v
	}
	if v := shown["backends.fake.api_key"]; v.Value != "********" || v.Source != SourceFile {
		t.Errorf("api_key shown as %+v, want hidden", v)
	}
	if h := shown["backends.fake.headers"].Value.(map[string]any); h["Authorization-Token"] != "********" || h["X-Team"] != "memos" {
		t.Errorf("headers shown as %v", h)
	}
	if v := shown["backends.fake.pool.size"]; v.Value != 8 || v.Source != SourceEnv || v.Origin != "MEMOS_BACKENDS__FAKE__POOL__SIZE" {
		t.Errorf("pool.size shown as %+v", v)
	}
	if v := shown["backends.fake.busy_timeout"]; v.Value != "3s" {
		t.Errorf("busy_timeout shown as %+v", v)
	}

	for yaml, want := range map[string]string{
		"backends:\n  fake:\n    pool:\n      sise: 1\n": `"backends.fake.pool.sise"`,
		"backends:\n  fake:\n    pool: 3\n":              "backends.fake.pool",
		"backends:\n  fake:\n    retry: maybe\n":         "true or false",
		"backends:\n  fake:\n    hook: x\n":              `"backends.fake.hook"`,
	} {
		_, err := load(t, yaml)
		if !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), FileName) {
			t.Errorf("%q: error %v, want ErrInvalid naming %s and the file", yaml, err, want)
		}
	}
}

func TestDefaultPath(t *testing.T) {
	cfg, err := load(t, "")
	if err != nil {
		t.Fatal(err)
	}
	if p := cfg.BackendConfig.(*fakeConfig).Path; p != filepath.Join(cfg.Home, "fake.db") {
		t.Errorf("default path %s", p)
	}
	// A relative path from the environment is relative to the working directory.
	cfg, err = load(t, "", "MEMOS_BACKENDS__FAKE__PATH=rel.db")
	if err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	if p := cfg.BackendConfig.(*fakeConfig).Path; p != filepath.Join(wd, "rel.db") {
		t.Errorf("env path %s", p)
	}
}

func TestEnvKey(t *testing.T) {
	for name, want := range map[string]string{
		"MEMOS_HOME":                           "home",
		"MEMOS_NAMESPACE":                      "namespace",
		"MEMOS_EMBEDDER":                       "embedder.name",
		"MEMOS_SEARCH__RRF_K":                  "search.rrf_k",
		"MEMOS_BACKENDS__SQLITE__BUSY_TIMEOUT": "backends.sqlite.busy_timeout",
		"MEMOS_OPENAI_KEY":                     "",
		"MEMOS_":                               "",
		"HOME":                                 "",
	} {
		if got := EnvKey(name); got != want {
			t.Errorf("EnvKey(%s) = %q, want %q", name, got, want)
		}
	}
}

func TestSnake(t *testing.T) {
	for in, want := range map[string]string{"BusyTimeout": "busy_timeout", "BaseURL": "base_url", "APIKey": "api_key", "Dim": "dim", "MaxWords": "max_words", "HTTP2Client": "http2_client"} {
		if got := snake(in); got != want {
			t.Errorf("snake(%s) = %s, want %s", in, got, want)
		}
	}
}

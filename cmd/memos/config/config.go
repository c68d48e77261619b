// Package config loads the memos configuration: what the CLI, memos serve,
// memos bench and examples/retrieval-eval open.
//
// Settings come from four layers, each overriding the one before:
//
//	built-in defaults < $MEMOS_HOME/config.yaml < MEMOS_* environment < flags
//
// The home directory itself comes from --home, then MEMOS_HOME, then
// ~/.memos; it cannot be set in the file that lives inside it.
//
// A module's section (backends.<name>, embedder.<name>, search) is decoded
// strictly into the typed config value its driver registered: an unknown key
// or a value of the wrong type is an error that names the key and the layer
// it came from. Load never opens a store; it only says what to open.
package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/providers/confmap"
	"github.com/knadh/koanf/providers/env/v2"
	"github.com/knadh/koanf/v2"

	"github.com/memos-go/memos/api/server"
	"github.com/memos-go/memos/core"
)

// Built-in defaults.
const (
	DefaultBackend     = "sqlite"
	DefaultEmbedder    = "hash"
	DefaultExtractor   = "rules"
	DefaultSummarizer  = "extractive"
	DefaultVectorIndex = "exact"
	// DefaultVectorPrecision is vector.precision's default.
	DefaultVectorPrecision = "float32"
	// FileName is the config file's name inside the home directory.
	FileName = "config.yaml"
	// EnvPrefix starts every environment variable the loader reads.
	EnvPrefix = "MEMOS_"
)

// Source says which layer an effective setting came from.
type Source string

// The layers, lowest first.
const (
	SourceDefault Source = "default"
	SourceFile    Source = "file"
	SourceEnv     Source = "env"
	SourceFlag    Source = "flag"
)

// sectionDefaults returns the defaults of a section whose defaults memos
// knows (nil for the others: a module's settings are its own), as a value of
// the section's config type.
func sectionDefaults(prefix string) any {
	switch prefix {
	case "search":
		return core.DefaultSearchConfig()
	case "governance":
		return core.DefaultGovernConfig()
	case "consolidate":
		return core.DefaultConsolidateConfig()
	case "server":
		return Server{Addr: server.DefaultAddr, MaxBody: server.DefaultMaxBody, Timeout: server.DefaultTimeout,
			ShutdownTimeout: server.DefaultShutdownTimeout, Console: true}
	}
	return nil
}

// Value is one effective setting and where it came from.
type Value struct {
	Key string `json:"key"`
	// Value is the effective value: the one set, else the default. It is nil
	// only for a setting of a module (a backend's, an embedder's, ...) that
	// nothing set and whose config does not tell its defaults
	// (driver.Defaulter): the module applies its own.
	Value  any    `json:"value"`
	Source Source `json:"source"`
	// Origin names the file, environment variable or flag that set the value.
	Origin string `json:"origin,omitempty"`
}

// Config is the effective configuration of one CLI run.
type Config struct {
	Home string // absolute path of the home directory
	File string // absolute path of the config file (which may not exist)
	// FileLoaded reports whether File existed and was read.
	FileLoaded bool
	Namespace  string
	// Backend names the registered backend; BackendConfig is the value its
	// driver's NewConfig returned, decoded from backends.<Backend>.
	Backend       string
	BackendConfig any
	// Embedder names the registered embedder; EmbedderConfig is decoded from
	// embedder.<Embedder>.
	Embedder       string
	EmbedderConfig any
	// Extractor names the registered extractor Capture uses;
	// ExtractorConfig is decoded from extractor.<Extractor>.
	Extractor       string
	ExtractorConfig any
	// Summarizer names the registered summarizer dream uses for knowledge
	// pages; SummarizerConfig is decoded from summarizer.<Summarizer>.
	Summarizer       string
	SummarizerConfig any
	// Reranker names the registered reranker searches use ("": none);
	// RerankerConfig is decoded from reranker.<Reranker> (nil without one).
	Reranker       string
	RerankerConfig any
	// Consolidate holds consolidation's thresholds (the consolidate section).
	Consolidate   core.ConsolidateConfig
	VectorIndex   string
	HNSWThreshold int // vector.hnsw_threshold; 0: the engine's default
	// VectorPrecision is vector.precision: float32 or int8 (core.Options).
	VectorPrecision string
	Search          core.SearchConfig
	Govern          core.GovernConfig // the governance section
	// Server configures memos serve; MEMOS_TOKEN adds a token to Server.Tokens.
	Server Server
	// Values lists every effective setting with its source, in a stable order.
	Values []Value
}

// Flag is a setting given on the command line.
type Flag struct {
	Key   string // config key, e.g. "namespace"
	Name  string // flag as typed, e.g. "--namespace"
	Value any
}

// Options are the inputs of Load. Nothing is read from the process
// environment except through them, so that tests can run in parallel.
type Options struct {
	// Env holds "NAME=value" pairs, typically os.Environ().
	Env []string
	// Flags holds the settings of the flags the user actually set.
	Flags []Flag
}

// topLevel lists the keys allowed at the top of the configuration.
var topLevel = []string{"backend", "backends", "consolidate", "embedder", "extractor", "governance", "home", "namespace", "reranker", "search", "server", "summarizer", "vector"}

// modules lists the sections that choose a registered module by
// "<section>.name" and configure it under "<section>.<name>".
var modules = []string{"embedder", "extractor", "reranker", "summarizer"}

// TokenEnv names the environment variable holding a token for memos serve
// that reaches every namespace (added to server.tokens).
const TokenEnv = "MEMOS_TOKEN"

// Server is the server section: how `memos serve` listens and whom it lets in.
type Server struct {
	// Addr is the listen address (default 127.0.0.1:7077); any address that
	// is not loopback requires a token.
	Addr string `koanf:"addr"`
	// Tokens are the bearer tokens accepted, each optionally limited to
	// namespaces.
	Tokens []server.Token `koanf:"tokens"`
	// MaxBody bounds a request body in bytes (default 1 MiB).
	MaxBody int64 `koanf:"max_body"`
	// Timeout bounds each request (default 30s).
	Timeout time.Duration `koanf:"timeout"`
	// ShutdownTimeout bounds how long a stop waits for in-flight requests (default 30s).
	ShutdownTimeout time.Duration `koanf:"shutdown_timeout"`
	// CORSOrigins are the browser origins allowed to call the API ("*": any; default none).
	CORSOrigins []string `koanf:"cors_origins"`
	// Console serves the web console at /console/ (default true); false
	// leaves only the API, MCP and the health and metrics routes.
	Console bool `koanf:"console"`
}

// Error is a configuration error. Its message names the key and where the key
// was set; it wraps core.ErrInvalid or core.ErrUnknownName so that the CLI
// maps it to the right exit code.
type Error struct {
	Where string // "file /home/u/.memos/config.yaml", "env MEMOS_BACKEND", …
	Msg   string
	Err   error // the sentinel
}

func (e *Error) Error() string {
	if e.Where == "" {
		return "config: " + e.Msg
	}
	return "config: " + e.Where + ": " + e.Msg
}

func (e *Error) Unwrap() error { return e.Err }

// layer is one source of settings.
type layer struct {
	src    Source
	ko     *koanf.Koanf
	origin map[string]string // key → env var or flag name; the file path for the file
	file   string
}

func (l *layer) where(key string) string {
	switch l.src {
	case SourceFile:
		return "file " + l.file
	case SourceEnv, SourceFlag:
		if n := l.origin[key]; n != "" {
			return string(l.src) + " " + n
		}
	}
	return string(l.src)
}

func (l *layer) originOf(key string) string {
	if l.src == SourceFile {
		return l.file
	}
	return l.origin[key]
}

// loader holds the layers of one Load.
type loader struct {
	layers []*layer // lowest first
	merged *koanf.Koanf
	home   string
}

// Load computes the effective configuration from opts.
func Load(opts Options) (*Config, error) {
	envs := envMap(opts.Env)
	envL, err := envLayer(opts.Env)
	if err != nil {
		return nil, err
	}
	flagL, err := flagLayer(opts.Flags)
	if err != nil {
		return nil, err
	}
	home, err := resolveHome(flagL, envL, envs)
	if err != nil {
		return nil, err
	}
	cfg := &Config{Home: home, File: filepath.Join(home, FileName)}
	fileL, err := fileLayer(cfg.File)
	if err != nil {
		return nil, err
	}
	cfg.FileLoaded = fileL != nil
	ld := &loader{home: home}
	upper := []*layer{fileL, envL, flagL}
	for _, l := range upper {
		if l != nil {
			ld.layers = append(ld.layers, l)
		}
	}
	defL, err := ld.defaults(envs)
	if err != nil {
		return nil, err
	}
	ld.layers = append([]*layer{defL}, ld.layers...)
	ld.merged = koanf.New(".")
	for _, l := range ld.layers {
		if err := ld.merged.Merge(l.ko); err != nil {
			return nil, &Error{Where: l.where(""), Msg: err.Error(), Err: core.ErrInvalid}
		}
	}
	if err := ld.build(cfg, envs); err != nil {
		return nil, err
	}
	return cfg, nil
}

func envMap(env []string) map[string]string {
	m := make(map[string]string, len(env))
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

// EnvKey maps an environment variable to a config key: MEMOS_ is stripped,
// the rest lower-cased and "__" read as "."; MEMOS_EMBEDDER is short for
// embedder.name. Variables whose first key segment is not a config key
// return "" (other MEMOS_* variables belong to plugins and tools).
func EnvKey(name string) string {
	rest, ok := strings.CutPrefix(name, EnvPrefix)
	if !ok || rest == "" {
		return ""
	}
	key := strings.ToLower(strings.ReplaceAll(rest, "__", "."))
	if slices.Contains(modules, key) {
		return key + ".name"
	}
	top, _, _ := strings.Cut(key, ".")
	if !slices.Contains(topLevel, top) {
		return ""
	}
	return key
}

func envLayer(environ []string) (*layer, error) {
	l := &layer{src: SourceEnv, ko: koanf.New("."), origin: map[string]string{}}
	p := env.Provider(".", env.Opt{
		Prefix:      EnvPrefix,
		EnvironFunc: func() []string { return environ },
		TransformFunc: func(name, v string) (string, any) {
			key := EnvKey(name)
			if key == "" || v == "" { // an empty variable counts as unset
				return "", nil
			}
			l.origin[key] = name
			return key, v
		},
	})
	if err := l.ko.Load(p, nil); err != nil {
		return nil, &Error{Where: "env", Msg: err.Error(), Err: core.ErrInvalid}
	}
	return l, nil
}

func flagLayer(flags []Flag) (*layer, error) {
	l := &layer{src: SourceFlag, ko: koanf.New("."), origin: map[string]string{}}
	m := map[string]any{}
	for _, f := range flags {
		m[f.Key] = f.Value
		l.origin[f.Key] = f.Name
	}
	if err := l.ko.Load(confmap.Provider(m, "."), nil); err != nil {
		return nil, &Error{Where: "flags", Msg: err.Error(), Err: core.ErrInvalid}
	}
	return l, nil
}

// resolveHome picks the home directory: --home, then MEMOS_HOME, then
// ~/.memos. The result is absolute.
func resolveHome(flagL, envL *layer, envs map[string]string) (string, error) {
	for _, l := range []*layer{flagL, envL} {
		if !l.ko.Exists("home") {
			continue
		}
		s, ok := l.ko.Get("home").(string)
		if !ok || strings.TrimSpace(s) == "" {
			return "", &Error{Where: l.where("home"), Msg: "home must be a directory path", Err: core.ErrInvalid}
		}
		return absPath(s, "", envs)
	}
	uh, err := userHome(envs)
	if err != nil {
		return "", &Error{Msg: "cannot find the home directory for the default ~/.memos (" + err.Error() + "); set MEMOS_HOME or --home", Err: core.ErrInvalid}
	}
	return filepath.Join(uh, ".memos"), nil
}

func userHome(envs map[string]string) (string, error) {
	if h := envs["HOME"]; h != "" {
		return h, nil
	}
	return os.UserHomeDir()
}

// absPath expands a leading "~/" and makes p absolute, relative to base
// ("" means the working directory).
func absPath(p, base string, envs map[string]string) (string, error) {
	if p == "~" || strings.HasPrefix(p, "~/") {
		uh, err := userHome(envs)
		if err != nil {
			return "", &Error{Msg: "cannot expand ~ in " + p + ": " + err.Error(), Err: core.ErrInvalid}
		}
		p = filepath.Join(uh, strings.TrimPrefix(p, "~"))
	}
	if base != "" && !filepath.IsAbs(p) {
		p = filepath.Join(base, p)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", &Error{Msg: "path " + p + ": " + err.Error(), Err: core.ErrInvalid}
	}
	return abs, nil
}

// fileLayer reads path, or returns nil when it does not exist.
func fileLayer(path string) (*layer, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, &Error{Where: "file " + path, Msg: err.Error(), Err: core.ErrInvalid}
	}
	l := &layer{src: SourceFile, ko: koanf.New("."), file: path}
	m, err := yaml.Parser().Unmarshal(b)
	if err != nil {
		return nil, &Error{Where: "file " + path, Msg: "not valid YAML: " + strings.TrimPrefix(err.Error(), "yaml: "), Err: core.ErrInvalid}
	}
	if err := l.ko.Load(confmap.Provider(m, ""), nil); err != nil {
		return nil, &Error{Where: "file " + path, Msg: err.Error(), Err: core.ErrInvalid}
	}
	if l.ko.Exists("home") {
		return nil, &Error{Where: "file " + path, Msg: "key home cannot be set in the file that lives in the home directory; use MEMOS_HOME or --home", Err: core.ErrInvalid}
	}
	return l, nil
}

// top returns the value of key from the highest layer that sets it.
func (ld *loader) top(key string) (any, *layer) {
	for i := len(ld.layers) - 1; i >= 0; i-- {
		if l := ld.layers[i]; l.ko.Exists(key) {
			return l.ko.Get(key), l
		}
	}
	return nil, nil
}

// defaults builds the lowest layer. The store path depends on the backend
// chosen by the upper layers, so it comes after them.
func (ld *loader) defaults(envs map[string]string) (*layer, error) {
	m := map[string]any{
		"home":             ld.home,
		"namespace":        core.DefaultNamespace,
		"backend":          DefaultBackend,
		"embedder.name":    DefaultEmbedder,
		"extractor.name":   DefaultExtractor,
		"summarizer.name":  DefaultSummarizer,
		"vector.index":     DefaultVectorIndex,
		"vector.precision": DefaultVectorPrecision,
	}
	name := DefaultBackend
	if v, l := ld.top("backend"); l != nil {
		name, _ = v.(string) // build reports a name that is not a string
	}
	if d, err := core.LookupBackend(name); err == nil && d.DefaultPath != "" && hasKey(d.NewConfig(), "path") {
		m["backends."+name+".path"] = filepath.Join(ld.home, d.DefaultPath)
	}
	l := &layer{src: SourceDefault, ko: koanf.New(".")}
	if err := l.ko.Load(confmap.Provider(m, "."), nil); err != nil {
		return nil, &Error{Where: "defaults", Msg: err.Error(), Err: core.ErrInvalid}
	}
	return l, nil
}

// where names the layer that set key in the merged view.
func (ld *loader) where(key string) string {
	if _, l := ld.top(key); l != nil {
		return l.where(key)
	}
	return ""
}

func (ld *loader) value(key string, v any) Value {
	_, l := ld.top(key)
	if l == nil {
		return Value{Key: key, Value: v, Source: SourceDefault}
	}
	return Value{Key: key, Value: v, Source: l.src, Origin: l.originOf(key)}
}

// str reads a top-level string setting.
func (ld *loader) str(key string) (string, error) {
	v := ld.merged.Get(key)
	s, ok := v.(string)
	if !ok || strings.TrimSpace(s) == "" {
		return "", &Error{Where: ld.where(key), Msg: fmt.Sprintf("%s must be a non-empty string, not %v", key, v), Err: core.ErrInvalid}
	}
	return s, nil
}

func (ld *loader) build(cfg *Config, envs map[string]string) error {
	if err := ld.checkTop(); err != nil {
		return err
	}
	var err error
	if cfg.Namespace, err = ld.str("namespace"); err != nil {
		return err
	}
	if err := core.ValidateNamespace(cfg.Namespace); err != nil {
		return &Error{Where: ld.where("namespace"), Msg: strings.TrimPrefix(err.Error(), core.ErrInvalid.Error()+": "), Err: core.ErrInvalid}
	}
	if cfg.Backend, err = ld.str("backend"); err != nil {
		return err
	}
	if cfg.Embedder, err = ld.str("embedder.name"); err != nil {
		return err
	}
	if cfg.VectorIndex, err = ld.str("vector.index"); err != nil {
		return err
	}
	if err := core.ValidateVectorIndex(cfg.VectorIndex); err != nil {
		return &Error{Where: ld.where("vector.index"), Msg: "vector.index: " + err.Error(), Err: err}
	}
	if cfg.VectorPrecision, err = ld.str("vector.precision"); err != nil {
		return err
	}
	if err := core.ValidateVectorPrecision(cfg.VectorPrecision); err != nil {
		return &Error{Where: ld.where("vector.precision"), Msg: "vector.precision: " + err.Error(), Err: err}
	}
	if v := ld.merged.Get("vector.hnsw_threshold"); v != nil {
		n, err := strconv.Atoi(strings.TrimSpace(fmt.Sprint(v)))
		if err != nil || n < 1 {
			return &Error{Where: ld.where("vector.hnsw_threshold"), Msg: fmt.Sprintf("vector.hnsw_threshold must be a positive whole number, not %v", v), Err: core.ErrInvalid}
		}
		cfg.HNSWThreshold = n
	}
	cfg.Values = append(cfg.Values,
		ld.value("home", cfg.Home), ld.value("namespace", cfg.Namespace), ld.value("backend", cfg.Backend))

	if err := ld.buildBackends(cfg, envs); err != nil {
		return err
	}
	if err := ld.buildModules(cfg); err != nil {
		return err
	}

	cfg.Values = append(cfg.Values, ld.value("vector.index", cfg.VectorIndex), ld.value("vector.precision", cfg.VectorPrecision))
	if cfg.HNSWThreshold != 0 {
		cfg.Values = append(cfg.Values, ld.value("vector.hnsw_threshold", cfg.HNSWThreshold))
	}
	if err := ld.checkKeys("vector", []string{"index", "hnsw_threshold", "precision"}); err != nil {
		return err
	}
	sc, vals, err := ld.decode("search", func() any { return new(core.SearchConfig) })
	if err != nil {
		return err
	}
	cfg.Search = *sc.(*core.SearchConfig)
	cfg.Values = append(cfg.Values, vals...)
	cc, vals, err := ld.decode("consolidate", func() any { return new(core.ConsolidateConfig) })
	if err != nil {
		return err
	}
	cfg.Consolidate = *cc.(*core.ConsolidateConfig)
	cfg.Values = append(cfg.Values, vals...)
	gc, vals, err := ld.decode("governance", func() any { return new(core.GovernConfig) })
	if err != nil {
		return err
	}
	cfg.Govern = *gc.(*core.GovernConfig)
	cfg.Values = append(cfg.Values, vals...)
	// The server section decodes over the one default that is not its
	// type's zero value: the console is on unless turned off.
	sv, vals, err := ld.decode("server", func() any { return &Server{Console: true} })
	if err != nil {
		return err
	}
	cfg.Server = *sv.(*Server)
	cfg.Values = append(cfg.Values, vals...)
	if t := envs[TokenEnv]; t != "" {
		cfg.Server.Tokens = append(cfg.Server.Tokens, server.Token{Name: TokenEnv, Token: t})
		cfg.Values = append(cfg.Values, Value{Key: "server.tokens", Value: "********", Source: SourceEnv, Origin: TokenEnv})
	}
	return nil
}

// buildBackends decodes the backends' sections: the chosen backend's and
// every other configured one.
func (ld *loader) buildBackends(cfg *Config, envs map[string]string) error {
	backendNames := ld.sectionNames("backends", cfg.Backend)
	for _, name := range backendNames {
		prefix := "backends." + name
		d, err := core.LookupBackend(name)
		if err != nil {
			key := "backend"
			if name != cfg.Backend || ld.merged.Exists(prefix) {
				key = prefix
			}
			return &Error{Where: ld.whereAny(key), Msg: key + ": " + err.Error(), Err: err}
		}
		if err := ld.resolvePath(prefix, envs); err != nil {
			return err
		}
		v, vals, err := ld.decode(prefix, d.NewConfig)
		if err != nil {
			return err
		}
		if name == cfg.Backend {
			cfg.BackendConfig = v
		}
		cfg.Values = append(cfg.Values, vals...)
	}
	return nil
}

// buildModules decodes the sections of the embedder, the extractor, the
// summarizer and the reranker (see module).
func (ld *loader) buildModules(cfg *Config) error {
	var err error
	if cfg.EmbedderConfig, err = ld.module("embedder", cfg.Embedder, cfg, func(name string) (func() any, error) {
		d, err := core.LookupEmbedder(name)
		return d.NewConfig, err
	}); err != nil {
		return err
	}
	if cfg.Extractor, err = ld.str("extractor.name"); err != nil {
		return err
	}
	if cfg.ExtractorConfig, err = ld.module("extractor", cfg.Extractor, cfg, func(name string) (func() any, error) {
		d, err := core.LookupExtractor(name)
		return d.NewConfig, err
	}); err != nil {
		return err
	}
	if cfg.Summarizer, err = ld.str("summarizer.name"); err != nil {
		return err
	}
	if cfg.SummarizerConfig, err = ld.module("summarizer", cfg.Summarizer, cfg, func(name string) (func() any, error) {
		d, err := core.LookupSummarizer(name)
		return d.NewConfig, err
	}); err != nil {
		return err
	}
	// No reranker unless one is named; "none" says so explicitly.
	if v := ld.merged.Get("reranker.name"); v != nil && v != "" && v != "none" {
		if cfg.Reranker, err = ld.str("reranker.name"); err != nil {
			return err
		}
	}
	if cfg.RerankerConfig, err = ld.module("reranker", cfg.Reranker, cfg, func(name string) (func() any, error) {
		d, err := core.LookupReranker(name)
		return d.NewConfig, err
	}); err != nil {
		return err
	}
	return nil
}

// module decodes the sections of a module kind chosen by "<parent>.name"
// (embedder, extractor, summarizer, reranker): the chosen module's, which it returns,
// and every other configured one, so that a typo anywhere is reported; a
// chosen name of "" (no reranker) returns nil. lookup returns
// a module's config constructor, or an error for an unknown name.
func (ld *loader) module(parent, chosen string, cfg *Config, lookup func(string) (func() any, error)) (any, error) {
	cfg.Values = append(cfg.Values, ld.value(parent+".name", chosen))
	var out any
	for _, name := range ld.sectionNames(parent, chosen) {
		prefix := parent + "." + name
		newConfig, err := lookup(name)
		if err != nil {
			key := parent + ".name"
			if name != chosen || ld.merged.Exists(prefix) {
				key = prefix
			}
			return nil, &Error{Where: ld.whereAny(key), Msg: key + ": " + err.Error(), Err: err}
		}
		v, vals, err := ld.decode(prefix, newConfig)
		if err != nil {
			return nil, err
		}
		if name == chosen {
			out = v
		}
		cfg.Values = append(cfg.Values, vals...)
	}
	return out, nil
}

// checkTop rejects unknown top-level keys and sections given as scalars.
func (ld *loader) checkTop() error {
	for _, key := range ld.merged.Keys() {
		top, _, nested := strings.Cut(key, ".")
		switch {
		case !slices.Contains(topLevel, top):
			return &Error{Where: ld.where(key), Msg: fmt.Sprintf("unknown key %q (known: %s)", key, strings.Join(topLevel, ", ")), Err: core.ErrInvalid}
		case (top == "home" || top == "namespace" || top == "backend") && nested:
			return &Error{Where: ld.where(key), Msg: fmt.Sprintf("%s is a single value, not a section (found %s)", top, key), Err: core.ErrInvalid}
		case (top == "backends" || top == "consolidate" || top == "governance" || slices.Contains(modules, top) || top == "search" || top == "server" || top == "vector") && !nested:
			if m, ok := ld.merged.Get(key).(map[string]any); ok && len(m) == 0 {
				continue // an empty section
			}
			if ld.merged.Get(key) == nil {
				continue
			}
			hint := ""
			if slices.Contains(modules, top) {
				hint = fmt.Sprintf(" (set %s.name to choose the %s)", top, top)
			}
			return &Error{Where: ld.where(key), Msg: fmt.Sprintf("%s is a section of settings, not a single value%s", top, hint), Err: core.ErrInvalid}
		}
	}
	return nil
}

// whereAny names the layer that set key or, for a section, any key in it.
func (ld *loader) whereAny(key string) string {
	if w := ld.where(key); w != "" {
		return w
	}
	for _, k := range ld.merged.Keys() {
		if strings.HasPrefix(k, key+".") {
			return ld.where(k)
		}
	}
	return ""
}

// sectionNames lists the module names configured under parent plus the
// chosen one (when not ""), chosen first, the rest sorted.
func (ld *loader) sectionNames(parent, chosen string) []string {
	var names []string
	if chosen != "" {
		names = append(names, chosen)
	}
	first := len(names)
	for _, n := range ld.merged.MapKeys(parent) {
		if slices.Contains(modules, parent) && n == "name" {
			continue
		}
		if n != chosen {
			names = append(names, n)
		}
	}
	sort.Strings(names[first:])
	return names
}

// checkKeys rejects keys under section other than the allowed ones.
func (ld *loader) checkKeys(section string, allowed []string) error {
	for _, k := range ld.merged.Keys() {
		rest, ok := strings.CutPrefix(k, section+".")
		if ok && !slices.Contains(allowed, rest) {
			return &Error{Where: ld.where(k), Msg: fmt.Sprintf("unknown key %q (%s takes: %s)", k, section, strings.Join(allowed, ", ")), Err: core.ErrInvalid}
		}
	}
	return nil
}

// resolvePath makes a backend's path absolute: relative paths from the
// config file are relative to the home directory, others to the working
// directory.
func (ld *loader) resolvePath(prefix string, envs map[string]string) error {
	key := prefix + ".path"
	v, l := ld.top(key)
	if l == nil || l.src == SourceDefault {
		return nil
	}
	s, ok := v.(string)
	if !ok || s == "" {
		return nil // decode reports the wrong type
	}
	base := ""
	if l.src == SourceFile {
		base = ld.home
	}
	abs, err := absPath(s, base, envs)
	if err != nil {
		return err
	}
	return ld.merged.Set(key, abs)
}

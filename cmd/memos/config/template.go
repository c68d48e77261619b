package config

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/memos-go/memos/core"
)

// Template returns the commented config.yaml that `memos init` writes: every
// key with its default or the kind of value it takes, all commented out, for
// the backends and embedders compiled into this binary.
func Template() string {
	var b strings.Builder
	b.WriteString(`# memos configuration.
#
# Order of precedence: built-in defaults < this file < MEMOS_* environment
# variables (MEMOS_NAMESPACE, MEMOS_BACKEND, MEMOS_EMBEDDER, and any key with
# "__" for ".", e.g. MEMOS_SEARCH__CANDIDATES) < command-line flags.
# Every key below is commented out and shows its default or the kind of
# value it takes; unknown keys are an error. Run "memos config show" to see
# the effective values and where each one came from.

`)
	line := func(indent int, key, value, comment string) {
		s := strings.Repeat("  ", indent) + key + ":"
		if value != "" {
			s += " " + value
		}
		if comment != "" {
			s = fmt.Sprintf("%-34s # %s", s, comment)
		}
		b.WriteString("# " + s + "\n")
	}
	line(0, "namespace", core.DefaultNamespace, "or project:<name>, harness:<name>, user:<id>, agent:<id>, run:<id>")
	b.WriteString("\n")
	line(0, "backend", DefaultBackend, "compiled in: "+strings.Join(core.BackendNames(), ", "))
	line(0, "backends", "", "")
	for _, name := range core.BackendNames() {
		d, err := core.LookupBackend(name)
		if err != nil {
			continue
		}
		line(1, name, "", "")
		for _, f := range fieldsOf(reflect.TypeOf(d.NewConfig())) {
			if f.key == "path" && d.DefaultPath != "" {
				line(2, f.key, d.DefaultPath, "relative to this directory")
				continue
			}
			line(2, f.key, "", describe(f.typ))
		}
	}
	b.WriteString("\n")
	// module lists a module kind chosen by <kind>.name and each compiled-in
	// module's settings.
	module := func(kind, def, comment string, names []string, newConfig func(string) (func() any, error)) {
		line(0, kind, "", comment)
		line(1, "name", def, "compiled in: "+strings.Join(names, ", "))
		for _, name := range names {
			nc, err := newConfig(name)
			if err != nil {
				continue
			}
			line(1, name, "", "")
			for _, f := range fieldsOf(reflect.TypeOf(nc())) {
				line(2, f.key, "", describe(f.typ))
			}
		}
		b.WriteString("\n")
	}
	module("embedder", DefaultEmbedder, "", core.EmbedderNames(), func(n string) (func() any, error) {
		d, err := core.LookupEmbedder(n)
		return d.NewConfig, err
	})
	module("extractor", DefaultExtractor, "what memos capture uses to find memories in a conversation", core.ExtractorNames(), func(n string) (func() any, error) {
		d, err := core.LookupExtractor(n)
		return d.NewConfig, err
	})
	module("summarizer", DefaultSummarizer, "what memos dream uses to write knowledge pages", core.SummarizerNames(), func(n string) (func() any, error) {
		d, err := core.LookupSummarizer(n)
		return d.NewConfig, err
	})
	// section lists a section whose defaults memos knows, each key with
	// its default value.
	section := func(name, comment string, skip int) {
		def := reflect.ValueOf(sectionDefaults(name))
		line(0, name, "", comment)
		for _, f := range fieldsOf(def.Type())[skip:] {
			line(1, f.key, yamlValue(display(f.key, def.FieldByIndex(f.index))), describe(f.typ))
		}
		b.WriteString("\n")
	}
	section("consolidate", "memos consolidate and dream", 0)
	section("governance", "the review queue, contradictions and lessons", 0)
	line(0, "reranker", "", "reorders the best search candidates (search.rerank_top); none by default")
	line(1, "name", "", "compiled in: "+strings.Join(core.RerankerNames(), ", ")+` (none: off)`)
	for _, name := range core.RerankerNames() {
		d, err := core.LookupReranker(name)
		if err != nil {
			continue
		}
		line(1, name, "", "")
		for _, f := range fieldsOf(reflect.TypeOf(d.NewConfig())) {
			line(2, f.key, "", describe(f.typ))
		}
	}
	b.WriteString("\n")
	line(0, "vector", "", "")
	line(1, "index", DefaultVectorIndex, "exact (brute-force SIMD search), hnsw or auto")
	line(1, "hnsw_threshold", strconv.Itoa(core.DefaultHNSWThreshold), "where auto switches to hnsw")
	line(1, "precision", DefaultVectorPrecision, "int8: a quarter of the vector memory, scores off by ~0.001")
	b.WriteString("\n")
	section("search", "ranking", 0)
	section("server", "memos serve; tokens: a list of {name, token, namespaces}, also MEMOS_TOKEN; an addr that is not loopback requires a token", 0)
	return strings.TrimSuffix(b.String(), "\n")
}

// yamlValue writes a default as a YAML value: plain where that reads the
// same, else as JSON (which YAML reads).
func yamlValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "[]"
	case string:
		if x != "" && strings.Trim(x, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-/") == "" && x != "true" && x != "false" {
			return x
		}
	}
	rv := reflect.ValueOf(v)
	if (rv.Kind() == reflect.Slice || rv.Kind() == reflect.Map) && rv.Len() == 0 {
		if rv.Kind() == reflect.Map {
			return "{}"
		}
		return "[]"
	}
	if s, ok := v.(fmt.Stringer); ok {
		return yamlValue(s.String())
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

package main

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/memos-go/memos/api/server"
	"github.com/memos-go/memos/cmd/memos/config"
	"github.com/memos-go/memos/core"
)

// tmplKey is one key of the config template.
type tmplKey struct {
	key     string // full dotted key
	value   string // the value the template shows (a default), if any
	comment string // the template's comment
	leaf    bool
}

var tmplLine = regexp.MustCompile(`^# ( *)([a-z0-9_]+):(?: (.*?))?\s*(?:# (.*))?$`)

// templateKeys parses config.Template(): every key line, in order.
func templateKeys() ([]tmplKey, error) {
	var keys []tmplKey
	var path []string
	for line := range strings.SplitSeq(config.Template(), "\n") {
		m := tmplLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		depth := len(m[1]) / 2
		if depth > len(path) {
			return nil, fmt.Errorf("config template: %q is indented below no section", line)
		}
		path = append(path[:depth], m[2])
		if n := len(keys); n > 0 && strings.HasPrefix(strings.Join(path, "."), keys[n-1].key+".") {
			keys[n-1].leaf = false
		}
		keys = append(keys, tmplKey{key: strings.Join(path, "."), value: strings.TrimSpace(m[3]), comment: strings.TrimSpace(m[4]), leaf: true})
	}
	return keys, nil
}

// field is a settable leaf of a config struct, as the loader decodes it.
type field struct {
	key   string // below the section
	owner reflect.Type
	name  string // Go field name
	index []int
	typ   reflect.Type
}

var durationType = reflect.TypeFor[time.Duration]()

// fieldsOf lists the leaves of struct type t by the loader's own rules
// (config.Settings). (TestConfigKeysHaveFields checks every template key
// finds its field.)
func fieldsOf(t reflect.Type) []field {
	var out []field
	for _, s := range config.Settings(t) {
		out = append(out, field{key: s.Key, owner: s.Owner, name: s.Name, index: s.Index, typ: s.Type})
	}
	return out
}

// section is a part of the configuration decoded into one Go struct.
type section struct {
	typ      reflect.Type
	defaults reflect.Value // the engine's defaults, if it has them
}

// sections maps a key prefix to the struct it decodes into.
func sections() map[string]section {
	m := map[string]section{
		"search":      {reflect.TypeFor[core.SearchConfig](), reflect.ValueOf(core.DefaultSearchConfig())},
		"consolidate": {reflect.TypeFor[core.ConsolidateConfig](), reflect.ValueOf(core.DefaultConsolidateConfig())},
		"governance":  {reflect.TypeFor[core.GovernConfig](), reflect.ValueOf(core.DefaultGovernConfig())},
		"server":      {typ: reflect.TypeFor[config.Server]()},
	}
	for _, n := range core.BackendNames() {
		if d, err := core.LookupBackend(n); err == nil {
			m["backends."+n] = section{typ: reflect.TypeOf(d.NewConfig())}
		}
	}
	for _, n := range core.EmbedderNames() {
		if d, err := core.LookupEmbedder(n); err == nil {
			m["embedder."+n] = section{typ: reflect.TypeOf(d.NewConfig())}
		}
	}
	for _, n := range core.ExtractorNames() {
		if d, err := core.LookupExtractor(n); err == nil {
			m["extractor."+n] = section{typ: reflect.TypeOf(d.NewConfig())}
		}
	}
	for _, n := range core.SummarizerNames() {
		if d, err := core.LookupSummarizer(n); err == nil {
			m["summarizer."+n] = section{typ: reflect.TypeOf(d.NewConfig())}
		}
	}
	for _, n := range core.RerankerNames() {
		if d, err := core.LookupReranker(n); err == nil {
			m["reranker."+n] = section{typ: reflect.TypeOf(d.NewConfig())}
		}
	}
	return m
}

// optionDocs documents keys that are not fields of a section by a field of
// core.Options, which they set.
var optionDocs = map[string]string{
	"namespace":             "Namespace",
	"vector.index":          "VectorIndex",
	"vector.hnsw_threshold": "HNSWThreshold",
	"vector.precision":      "VectorPrecision",
}

// otherDefaults are defaults applied outside the config structs.
var otherDefaults = map[string]string{
	"server.addr":             server.DefaultAddr,
	"server.max_body":         strconv.Itoa(server.DefaultMaxBody),
	"server.timeout":          core.FormatDuration(server.DefaultTimeout),
	"server.shutdown_timeout": core.FormatDuration(server.DefaultShutdownTimeout),
}

// envName is the environment variable that sets key.
func envName(key string) string {
	switch key {
	case "server.tokens":
		return config.TokenEnv + " (one token for every namespace)"
	case "embedder.name", "extractor.name", "summarizer.name", "reranker.name":
		return config.EnvPrefix + strings.ToUpper(strings.TrimSuffix(key, ".name"))
	}
	return config.EnvPrefix + strings.ToUpper(strings.ReplaceAll(key, ".", "__"))
}

type configRow struct {
	key, typ, def, env, doc string
}

func configPage(docs *docIndex) (string, error) {
	keys, err := templateKeys()
	if err != nil {
		return "", err
	}
	secs := sections()
	var rows []configRow
	for _, k := range keys {
		if !k.leaf {
			continue
		}
		r, err := configRowOf(docs, secs, k)
		if err != nil {
			return "", err
		}
		rows = append(rows, r)
	}

	var b strings.Builder
	b.WriteString("# Configuration reference\n\n")
	b.WriteString("Every key of `$MEMOS_HOME/config.yaml`, generated from the template `memos init` writes and the Go fields the keys decode into. " +
		"How the layers combine, how errors read and worked examples: [Configuration](../configuration.md).\n\n")
	b.WriteString("- **Default**: the value used when nothing sets the key. Where it is blank, the module applies its own default when it opens, and the description says which.\n")
	b.WriteString("- **Environment**: any key can be set as `MEMOS_` + the key in upper case with `__` for each `.`; empty variables count as unset.\n")
	b.WriteString("- **Flags**: `--home`, `--namespace`, `--backend`, `--embedder` and `--postgres-dsn` override `home`, `namespace`, `backend`, `embedder.name` and `backends.postgres.dsn` (see the [CLI reference](cli.md#global-flags)).\n\n")

	b.WriteString("| Key | Type | Default | Environment | Description |\n|---|---|---|---|---|\n")
	b.WriteString("| `home` | string | `~/.memos` | `MEMOS_HOME` | The home directory: the config file and, by default, the store. Set by `--home` or the environment only, never in the `config.yaml` it contains. |\n")
	current := ""
	for _, r := range rows {
		top := sectionOf(r.key, secs)
		if top != current {
			current = top
			if top != "" {
				fmt.Fprintf(&b, "\n## %s\n\n", top)
				if s, ok := secs[top]; ok {
					t := s.typ
					for t.Kind() == reflect.Pointer {
						t = t.Elem()
					}
					fmt.Fprintf(&b, "Decoded into `%s`.\n\n", docs.typeName(t))
				}
				b.WriteString("| Key | Type | Default | Environment | Description |\n|---|---|---|---|---|\n")
			}
		}
		env, note, _ := strings.Cut(r.env, " ")
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", code(r.key), r.typ, code(r.def), strings.TrimSpace(code(env)+" "+note), cell(r.doc))
	}
	return b.String(), nil
}

// sectionOf names the table a key goes in: its section when it has one,
// else "" (the top-level table) for namespace and backend, else its first
// segment.
func sectionOf(key string, secs map[string]section) string {
	for p := range secs {
		if strings.HasPrefix(key, p+".") {
			return p
		}
	}
	if !strings.Contains(key, ".") {
		return ""
	}
	top, _, _ := strings.Cut(key, ".")
	return top
}

func configRowOf(docs *docIndex, secs map[string]section, k tmplKey) (configRow, error) {
	r := configRow{key: k.key, env: envName(k.key), def: k.value}
	if got := config.EnvKey(strings.Fields(r.env)[0]); got != k.key && k.key != "server.tokens" {
		return r, fmt.Errorf("config key %s: the loader reads %s as %q", k.key, r.env, got)
	}
	defer func() {
		if strings.HasPrefix(r.typ, "map of") {
			r.env += "__<NAME>"
		}
	}()
	if d, ok := otherDefaults[k.key]; ok {
		r.def = d
	}
	if strings.HasPrefix(k.key, "backends.") && strings.HasSuffix(k.key, ".path") && r.def != "" {
		r.def = "$MEMOS_HOME/" + r.def
	}
	prefix := ""
	for p := range secs {
		if strings.HasPrefix(k.key, p+".") {
			prefix = p
		}
	}
	if prefix == "" {
		// A key of its own: namespace, backend, <module>.name, vector.*.
		r.typ = "string"
		r.doc = k.comment
		if _, ok := optionDocs[k.key]; ok {
			r.doc = "" // the field's doc says it all
		}
		if k.key == "reranker.name" && r.def == "" {
			r.def = "none"
		}
		if name, ok := optionDocs[k.key]; ok {
			t := reflect.TypeFor[core.Options]()
			f, _ := t.FieldByName(name)
			r.typ = kind(f.Type)
			doc, _ := docs.fieldDoc(t.PkgPath(), t.Name(), name)
			names := map[string]string{}
			for key, field := range optionDocs {
				names[field] = key
			}
			doc = docs.rewrite(t.PkgPath(), doc, names)
			if r.doc != "" && doc != "" {
				r.doc = strings.TrimSuffix(r.doc, ".") + ". " + doc
			} else if doc != "" {
				r.doc = doc
			}
		}
		if r.doc != "" && r.doc[0] >= 'a' && r.doc[0] <= 'z' {
			r.doc = strings.ToUpper(r.doc[:1]) + r.doc[1:]
		}
		return r, nil
	}
	sec := secs[prefix]
	sub := strings.TrimPrefix(k.key, prefix+".")
	fields := fieldsOf(sec.typ)
	i := slices.IndexFunc(fields, func(f field) bool { return f.key == sub })
	if i < 0 {
		return r, fmt.Errorf("config key %s: no field of %s decodes it", k.key, sec.typ)
	}
	f := fields[i]
	r.typ = kind(f.typ)
	if sec.defaults.IsValid() {
		r.def = format(sec.defaults.FieldByIndex(f.index))
	}
	names := map[string]string{}
	for _, g := range fields {
		if g.owner == f.owner {
			names[g.name] = g.key
		}
	}
	owner := f.owner
	doc, lead := docs.fieldDoc(owner.PkgPath(), owner.Name(), f.name)
	if lead != "" {
		doc = "See `" + names[lead] + "`."
	}
	r.doc = docs.rewrite(owner.PkgPath(), doc, names)
	return r, nil
}

// kind names a value's type as a config file writes it.
func kind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == durationType {
		return "duration"
	}
	switch t.Kind() {
	case reflect.Bool:
		return "bool"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.String:
		return "string"
	case reflect.Slice:
		return "list of " + kind(t.Elem())
	case reflect.Map:
		return "map of " + kind(t.Elem())
	}
	return "object"
}

// format renders a default value as a config file would write it.
func format(v reflect.Value) string {
	if v.Type() == durationType {
		return core.FormatDuration(time.Duration(v.Int()))
	}
	switch v.Kind() {
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Float32, reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	case reflect.String:
		if v.String() == "" {
			return "none"
		}
		return v.String()
	case reflect.Slice:
		if v.Len() == 0 {
			return "none"
		}
		parts := make([]string, v.Len())
		for i := range parts {
			parts[i] = format(v.Index(i))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case reflect.Map:
		if v.Len() == 0 {
			return "none"
		}
		var parts []string
		for _, k := range v.MapKeys() {
			parts = append(parts, fmt.Sprintf("%v: %s", k.Interface(), format(v.MapIndex(k))))
		}
		slices.Sort(parts)
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return fmt.Sprint(v.Interface())
}

package main

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unicode"

	"github.com/invopop/jsonschema"

	"github.com/memos-go/memos/api"
)

// The model is what both languages' files are written from: the
// operations, every object type their requests and answers hold, named,
// and the error kinds. Shapes come from the JSON Schemas the OpenAPI
// document publishes (api.Schema); names come from the Go types behind
// them, walked alongside, because the published schemas are inlined.

type model struct {
	ops   []*opDef
	types []*typeDef // dependencies before the types that use them
	kinds []string   // error kinds, as api.ErrorDetail's schema lists them

	byGo  map[reflect.Type]*typeDef
	names map[string]bool
}

type opDef struct {
	op *api.Op
	// in and out are the request and answer types; inAlias is set when the
	// request type is another op's (search and explain share one).
	in      *typeDef
	out     *typ
	inName  string
	inAlias bool
}

// typeDef is a named object type.
type typeDef struct {
	name   string
	fields []*field
	done   bool // fields are known (false while they are being walked)
}

type field struct {
	json     string
	doc      string
	required bool
	t        *typ
}

// typ is a JSON value's type.
type typ struct {
	kind string // string, integer, number, boolean, array, map, object (free JSON object), ref, enum, any
	elem *typ
	ref  *typeDef
	enum []string
}

// names of the types whose Go name reads badly in a client.
var renames = map[string]string{
	"api.Item":    "BatchMemory",
	"api.TurnIn":  "Turn",
	"core.Result": "SearchHit",
}

// build walks ops and the error body's schema.
func build(ops []*api.Op) (*model, error) {
	m := &model{byGo: map[reflect.Type]*typeDef{}, names: map[string]bool{}}
	for _, o := range ops {
		if o.In == nil || o.Out == nil {
			return nil, fmt.Errorf("operation %s has no input or output type", o.Name)
		}
		for _, own := range []string{"call", "health", "namespace", "timeout"} {
			if camel(o.Name) == own || snake(o.Name) == own || camel(o.Name) == "baseUrl" || snake(o.Name) == "base_url" {
				return nil, fmt.Errorf("operation %s: its client method would hide the clients' own %s", o.Name, own)
			}
		}
		d := &opDef{op: o}
		if td, ok := m.byGo[o.In]; ok {
			d.in, d.inName, d.inAlias = td, m.unique(pascal(o.Name)+"Request"), true
		} else {
			t, err := m.walkNamed(o.InputSchema(), o.In, pascal(o.Name)+"Request")
			if err != nil {
				return nil, fmt.Errorf("%s request: %w", o.Name, err)
			}
			d.in, d.inName = t, t.name
		}
		outName := ""
		if o.Out.PkgPath() == reflect.TypeFor[api.Op]().PkgPath() {
			outName = pascal(o.Name) + "Result" // api's own answer types (MemoriesOut, ...)
		}
		s := o.OutputSchema()
		var err error
		if s.Type == "object" && s.Properties != nil && s.Properties.Len() > 0 {
			d.out, err = m.object(s, o.Out, "", outName)
		} else { // an answer that is not an object with fields: a list, a map, a string
			d.out, err = m.walk(s, o.Out, pascal(o.Name)+"Result")
		}
		if err != nil {
			return nil, fmt.Errorf("%s answer: %w", o.Name, err)
		}
		m.ops = append(m.ops, d)
	}
	// The error kinds: ErrorBody.error.kind's enum.
	s := api.Schema(reflect.TypeFor[api.ErrorBody]())
	detail, ok := s.Properties.Get("error")
	if !ok {
		return nil, fmt.Errorf("the error body's schema has no error property")
	}
	kind, ok := detail.Properties.Get("kind")
	if !ok || len(kind.Enum) == 0 {
		return nil, fmt.Errorf("the error body's schema lists no error kinds")
	}
	for _, k := range kind.Enum {
		m.kinds = append(m.kinds, fmt.Sprint(k))
	}
	return m, nil
}

// walkNamed walks an object schema that must become a named type.
func (m *model) walkNamed(s *jsonschema.Schema, t reflect.Type, name string) (*typeDef, error) {
	if s.Type != "object" || s.Properties == nil || s.Properties.Len() == 0 {
		return nil, fmt.Errorf("%s: want an object with properties, the schema is %q", t, s.Type)
	}
	tt, err := m.object(s, t, "", name)
	if err != nil {
		return nil, err
	}
	return tt.ref, nil
}

// walk returns the type of values of schema s, whose Go type is t (nil
// when unknown); hint names an object type whose Go type has no name.
func (m *model) walk(s *jsonschema.Schema, t reflect.Type, hint string) (*typ, error) {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch s.Type {
	case "string":
		if len(s.Enum) > 0 {
			var e []string
			for _, v := range s.Enum {
				e = append(e, fmt.Sprint(v))
			}
			return &typ{kind: "enum", enum: e}, nil
		}
		return &typ{kind: "string"}, nil
	case "integer", "number", "boolean":
		return &typ{kind: s.Type}, nil
	case "array":
		var et reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			et = t.Elem()
		}
		if s.Items == nil {
			return &typ{kind: "array", elem: &typ{kind: "any"}}, nil
		}
		e, err := m.walk(s.Items, et, singular(hint))
		return &typ{kind: "array", elem: e}, err
	case "object":
		ap := s.AdditionalProperties
		if ap != nil && ap != jsonschema.TrueSchema && ap != jsonschema.FalseSchema && ap.Type != "" {
			var et reflect.Type
			if t != nil && t.Kind() == reflect.Map {
				et = t.Elem()
			}
			e, err := m.walk(ap, et, hint+"Value")
			return &typ{kind: "map", elem: e}, err
		}
		if s.Properties == nil || s.Properties.Len() == 0 {
			return &typ{kind: "object"}, nil
		}
		return m.object(s, t, hint, "")
	case "":
		return &typ{kind: "any"}, nil
	}
	return nil, fmt.Errorf("schema type %q is not one the generator knows", s.Type)
}

// object names and walks an object type with properties: force, else the
// Go type's name, else hint.
func (m *model) object(s *jsonschema.Schema, t reflect.Type, hint, force string) (*typ, error) {
	if t != nil && t.Kind() != reflect.Struct {
		t = nil
	}
	if t != nil {
		if td, ok := m.byGo[t]; ok {
			return &typ{kind: "ref", ref: td}, nil
		}
	}
	name := force
	if name == "" && t != nil && t.Name() != "" {
		name = t.Name()
		if r, ok := renames[t.String()]; ok { // e.g. api.TurnIn
			name = r
		}
	}
	if name == "" {
		name = hint
	}
	if name == "" {
		return nil, fmt.Errorf("an object type with %d properties has no name", s.Properties.Len())
	}
	td := &typeDef{name: m.unique(name)}
	if t != nil {
		m.byGo[t] = td
	}
	goFields := map[string]reflect.Type{}
	if t != nil {
		jsonFields(t, goFields)
	}
	for pair := s.Properties.Oldest(); pair != nil; pair = pair.Next() {
		ft, err := m.walk(pair.Value, goFields[pair.Key], td.name+pascal(pair.Key))
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %w", td.name, pair.Key, err)
		}
		td.fields = append(td.fields, &field{json: pair.Key, doc: pair.Value.Description, required: slices.Contains(s.Required, pair.Key), t: ft})
	}
	td.done = true
	m.types = append(m.types, td)
	return &typ{kind: "ref", ref: td}, nil
}

// unique returns name, or name with a number when another type has it.
func (m *model) unique(name string) string {
	n := name
	for i := 2; m.names[n]; i++ {
		n = fmt.Sprintf("%s%d", name, i)
	}
	m.names[n] = true
	return n
}

// jsonFields maps the JSON names of struct t's fields to their Go types,
// flattening embedded structs the way encoding/json does.
func jsonFields(t reflect.Type, into map[string]reflect.Type) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			jsonFields(ft, into)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if _, ok := into[name]; !ok {
			into[name] = f.Type
		}
	}
}

// pascal turns remember-batch or emotional_context into RememberBatch,
// EmotionalContext.
func pascal(s string) string {
	var b strings.Builder
	up := true
	for _, r := range s {
		if r == '-' || r == '_' || r == ' ' || r == '.' {
			up = true
			continue
		}
		if up {
			r = unicode.ToUpper(r)
			up = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// camel turns remember-batch into rememberBatch.
func camel(s string) string {
	p := pascal(s)
	if p == "" {
		return p
	}
	return strings.ToLower(p[:1]) + p[1:]
}

// snake turns remember-batch into remember_batch.
func snake(s string) string { return strings.ReplaceAll(s, "-", "_") }

func singular(s string) string {
	if s == "" {
		return s
	}
	if strings.HasSuffix(s, "ies") {
		return strings.TrimSuffix(s, "ies") + "y"
	}
	return strings.TrimSuffix(s, "s")
}

// errorClass is the class name of an error kind: not_found → NotFoundError.
func errorClass(kind string) string { return pascal(kind) + "Error" }

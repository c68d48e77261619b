package main

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/invopop/jsonschema"

	"github.com/memos-go/memos/api"
)

// apiPage renders the operation table: one section per operation with its
// HTTP route, MCP tool, description, input fields and output.
func apiPage(docs *docIndex) (string, error) {
	var b strings.Builder
	b.WriteString("# HTTP and MCP reference\n\n")
	b.WriteString("Every operation of the table in `api/ops.go`, from which the HTTP routes, the MCP tools and `/openapi.json` are all generated. " +
		"Each is `POST /api/mem/<operation>` with a JSON body over HTTP ([HTTP API](../http-api.md)) and a tool of the same input over MCP ([MCP](../mcp.md)). " +
		"Every input also takes `namespace`; unknown fields are an error. " +
		"Errors are `{\"error\":{\"kind\":…,\"message\":…}}` with the HTTP status of the kind.\n\n")
	b.WriteString("| Operation | HTTP route | MCP tool | What it does |\n|---|---|---|---|\n")
	for _, o := range api.Ops() {
		fmt.Fprintf(&b, "| [%s](#%s) | `POST %s` | `%s` | %s |\n", o.Name, anchor(o.Name), o.Path(), o.Tool, cell(o.Title))
	}
	b.WriteString("\n")
	seen := map[reflect.Type]string{} // output type → the operation that described it
	for _, o := range api.Ops() {
		fmt.Fprintf(&b, "## %s\n\n", o.Name)
		fmt.Fprintf(&b, "**%s.** `POST %s` · MCP tool `%s`", o.Title, o.Path(), o.Tool)
		var marks []string
		if o.ReadOnly {
			marks = append(marks, "read-only")
		}
		if o.Destructive {
			marks = append(marks, "destructive")
		}
		if o.Global {
			marks = append(marks, "whole store (not for tokens limited to namespaces)")
		}
		if len(marks) > 0 {
			fmt.Fprintf(&b, " · %s", strings.Join(marks, ", "))
		}
		b.WriteString("\n\n")
		fmt.Fprintf(&b, "%s\n\n", oneParagraph(o.Description))

		fmt.Fprintf(&b, "Input (`%s`):\n\n", o.In.Name())
		rows := properties(o.InputSchema(), "", 4)
		b.WriteString("| Field | Type | Required | Description |\n|---|---|---|---|\n")
		for _, r := range rows {
			req := ""
			if r.required {
				req = "yes"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", code(r.name), r.typ, req, cell(r.desc))
		}
		b.WriteString("\n")

		if first, ok := seen[o.Out]; ok {
			fmt.Fprintf(&b, "Output: `%s`, as for [%s](#%s).\n\n", docs.typeName(o.Out), first, anchor(first))
			continue
		}
		seen[o.Out] = o.Name
		fmt.Fprintf(&b, "Output (`%s`):\n\n", docs.typeName(o.Out))
		rows = properties(o.OutputSchema(), "", 1)
		if len(rows) == 0 {
			b.WriteString("No fields.\n\n")
			continue
		}
		goDocs := jsonFieldDocs(docs, o.Out)
		b.WriteString("| Field | Type | Description |\n|---|---|---|\n")
		for _, r := range rows {
			if r.desc == "" {
				r.desc = goDocs[r.name]
			}
			fmt.Fprintf(&b, "| %s | %s | %s |\n", code(r.name), r.typ, cell(r.desc))
		}
		b.WriteString("\n")
	}
	return strings.TrimRight(b.String(), "\n") + "\n", nil
}

// jsonFieldDocs maps the JSON names of struct t's fields (embedded structs
// included) to the doc comments of the Go fields.
func jsonFieldDocs(docs *docIndex, t reflect.Type) map[string]string {
	out := map[string]string{}
	type fieldRef struct {
		owner reflect.Type
		name  string
	}
	var order []string
	refs := map[string]fieldRef{}
	names := map[string]string{} // Go name → JSON name
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return
		}
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if f.Anonymous && name == "" {
				walk(f.Type)
				continue
			}
			if !f.IsExported() || name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			order = append(order, name)
			refs[name] = fieldRef{t, f.Name}
			names[f.Name] = name
		}
	}
	walk(t)
	for _, name := range order {
		r := refs[name]
		doc, lead := docs.fieldDoc(r.owner.PkgPath(), r.owner.Name(), r.name)
		if lead != "" {
			doc = "See `" + names[lead] + "`."
		}
		out[name] = docs.rewrite(r.owner.PkgPath(), doc, names)
	}
	return out
}

type propRow struct {
	name, typ, desc string
	required        bool
}

// properties lists the properties of an object schema, and those of
// nested objects down to depth levels, named a.b and a[].b.
func properties(s *jsonschema.Schema, prefix string, depth int) []propRow {
	if s == nil || s.Properties == nil || depth == 0 {
		return nil
	}
	var rows []propRow
	for p := s.Properties.Oldest(); p != nil; p = p.Next() {
		name, ps := p.Key, p.Value
		r := propRow{name: prefix + name, typ: schemaType(ps), desc: ps.Description, required: slices.Contains(s.Required, name)}
		if c := constraints(ps); c != "" {
			r.desc = strings.TrimSpace(strings.TrimSuffix(r.desc, ".") + ". " + c)
			r.desc = strings.TrimPrefix(r.desc, ". ")
		}
		rows = append(rows, r)
		switch {
		case ps.Type == "object":
			rows = append(rows, properties(ps, prefix+name+".", depth-1)...)
		case ps.Type == "array" && ps.Items != nil && ps.Items.Type == "object":
			rows = append(rows, properties(ps.Items, prefix+name+"[].", depth-1)...)
		}
	}
	return rows
}

func schemaType(s *jsonschema.Schema) string {
	switch {
	case s.Type == "array" && s.Items != nil:
		return "array of " + schemaType(s.Items)
	case s.Type != "":
		return s.Type
	case len(s.AnyOf) > 0 || len(s.OneOf) > 0:
		var ts []string
		for _, a := range append(s.AnyOf, s.OneOf...) {
			ts = append(ts, schemaType(a))
		}
		return strings.Join(ts, " or ")
	}
	return "any"
}

// constraints describes enum and range limits in words.
func constraints(s *jsonschema.Schema) string {
	var out []string
	if len(s.Enum) > 0 {
		vals := make([]string, len(s.Enum))
		for i, v := range s.Enum {
			vals[i] = fmt.Sprintf("`%v`", v)
		}
		out = append(out, "One of "+strings.Join(vals, ", ")+".")
	}
	if s.Minimum != "" {
		out = append(out, "At least "+string(s.Minimum)+".")
	}
	if s.ExclusiveMinimum != "" {
		out = append(out, "Above "+string(s.ExclusiveMinimum)+".")
	}
	if s.Maximum != "" {
		out = append(out, "At most "+string(s.Maximum)+".")
	}
	if s.MinItems != nil {
		out = append(out, fmt.Sprintf("At least %d items.", *s.MinItems))
	}
	if s.MaxItems != nil {
		out = append(out, fmt.Sprintf("At most %d items.", *s.MaxItems))
	}
	return strings.Join(out, " ")
}

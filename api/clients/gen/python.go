package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// pyReserved are names a method parameter cannot take as they are: Python's
// keywords and the names a generated method body uses. They get a trailing
// underscore (from → from_).
var pyReserved = []string{
	"False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
	"def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in",
	"is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with", "yield",
	"self", "cast",
}

func pyParam(json string) string {
	if slices.Contains(pyReserved, json) {
		return json + "_"
	}
	return json
}

// python returns memos_client/_generated.py: the error classes, the types
// (TypedDicts) and Client with one method per operation.
func python(m *model) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\"\"\"memos' operations and types, generated from its operation table.\"\"\"\n\n", header)
	b.WriteString("from __future__ import annotations\n\nfrom typing import Any, Dict, List, Literal, Optional, Tuple, TypedDict, cast\n\n")
	b.WriteString("from ._runtime import ERROR_CLASSES, BaseClient, MemosError\n\n")

	var names, all []string
	for _, o := range m.ops {
		names = append(names, strconv.Quote(o.op.Name))
	}
	fmt.Fprintf(&b, "#: The operations of the table this client was generated from, in its order.\nOPERATIONS: Tuple[str, ...] = (\n%s)\n\n", pyList(names))
	all = append(all, "OPERATIONS", "ErrorKind", "Client")

	var kinds []string
	for _, k := range m.kinds {
		kinds = append(kinds, strconv.Quote(k))
	}
	fmt.Fprintf(&b, "#: The error kinds the API answers with.\nErrorKind = Literal[\n%s]\n\n", pyList(kinds))
	for _, k := range m.kinds {
		c := errorClass(k)
		all = append(all, c)
		fmt.Fprintf(&b, "\nclass %s(MemosError):\n    \"\"\"The API answered with an error of kind %s.\"\"\"\n\n", c, k)
	}
	b.WriteString("\nERROR_CLASSES.update(\n    {\n")
	for _, k := range m.kinds {
		fmt.Fprintf(&b, "        %q: %s,\n", k, errorClass(k))
	}
	b.WriteString("    }\n)\n\n")

	defined := map[*typeDef]bool{}
	for _, t := range m.types {
		all = append(all, t.name)
		var req, opt []*field
		for _, f := range t.fields {
			if f.required {
				req = append(req, f)
			} else {
				opt = append(opt, f)
			}
		}
		var bases []string
		for _, g := range []struct {
			suffix string
			fs     []*field
			total  string
		}{{"Required", req, ""}, {"Optional", opt, ", total=False"}} {
			if len(g.fs) == 0 {
				continue
			}
			base := "_" + t.name + g.suffix
			bases = append(bases, base)
			fmt.Fprintf(&b, "\n%s = TypedDict(\n    %q,\n    {\n", base, base)
			for _, f := range g.fs {
				if f.doc != "" {
					fmt.Fprintf(&b, "        # %s\n", indent(wrap(f.doc, 88), "        # "))
				}
				fmt.Fprintf(&b, "        %q: %s,\n", f.json, pyType(f.t, defined))
			}
			fmt.Fprintf(&b, "    }%s,\n)\n", g.total)
		}
		fmt.Fprintf(&b, "\n\nclass %s(%s):\n    \"\"\"%s\"\"\"\n\n", t.name, strings.Join(bases, ", "), typeDoc(t))
		defined[t] = true
	}
	for _, o := range m.ops {
		if o.inAlias {
			all = append(all, o.inName)
			fmt.Fprintf(&b, "\n#: The request of %s: the same as %s's.\n%s = %s\n", o.op.Name, o.in.name, o.inName, o.in.name)
		}
	}

	b.WriteString("\n\nclass Client(BaseClient):\n    \"\"\"A client of memos' HTTP API: one method per operation.\n\n" +
		"    Arguments are the operation's request fields; those left None are not\n" +
		"    sent (the server's default applies). Each method returns the decoded\n" +
		"    JSON answer and raises a MemosError subclass named after the error's\n" +
		"    kind (NotFoundError, InvalidError, ForbiddenError, ...).\n    \"\"\"\n")
	for _, o := range m.ops {
		var req, opt []*field
		for _, f := range o.in.fields {
			if f.required {
				req = append(req, f)
			} else {
				opt = append(opt, f)
			}
		}
		fmt.Fprintf(&b, "\n    def %s(\n        self,\n", pyParam(snake(o.op.Name)))
		for _, f := range req {
			fmt.Fprintf(&b, "        %s: %s,\n", pyParam(f.json), pyType(f.t, defined))
		}
		if len(opt) > 0 {
			b.WriteString("        *,\n")
		}
		for _, f := range opt {
			fmt.Fprintf(&b, "        %s: Optional[%s] = None,\n", pyParam(f.json), pyType(f.t, defined))
		}
		fmt.Fprintf(&b, "    ) -> %s:\n", pyType(o.out, defined))
		doc := fmt.Sprintf("%s.\n\n%s\n\nPOST %s, MCP tool %s.", o.op.Title, o.op.Description, o.op.Path(), o.op.Tool)
		fmt.Fprintf(&b, "        \"\"\"%s\n        \"\"\"\n", indent(wrap(pyDoc(doc), 80), "        "))
		fmt.Fprintf(&b, "        body: Dict[str, Any] = {\n")
		for _, f := range o.in.fields {
			fmt.Fprintf(&b, "            %q: %s,\n", f.json, pyParam(f.json))
		}
		fmt.Fprintf(&b, "        }\n        return cast(%s, self.call(%q, body))\n", pyType(o.out, defined), o.op.Name)
	}

	slices.Sort(all)
	var q []string
	for _, n := range all {
		q = append(q, strconv.Quote(n))
	}
	fmt.Fprintf(&b, "\n\n__all__ = [\n%s]\n", pyList(q))
	return []byte(b.String())
}

// pyList lays out items one a line, indented, with trailing commas.
func pyList(items []string) string {
	var b strings.Builder
	for _, it := range items {
		b.WriteString("    " + it + ",\n")
	}
	return b.String()
}

func typeDoc(t *typeDef) string {
	var names []string
	for _, f := range t.fields {
		names = append(names, f.json)
	}
	s := wrap(fmt.Sprintf("%s: a JSON object with %s.", t.name, strings.Join(names, ", ")), 80)
	if !strings.Contains(s, "\n") {
		return s
	}
	return indent(s, "    ") + "\n    "
}

// pyDoc makes s safe inside a """ docstring.
func pyDoc(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `"""`, `\"\"\"`)
}

// pyType is t's annotation; a type not yet defined is quoted.
func pyType(t *typ, defined map[*typeDef]bool) string {
	switch t.kind {
	case "string":
		return "str"
	case "integer":
		return "int"
	case "number":
		return "float"
	case "boolean":
		return "bool"
	case "array":
		return "List[" + pyType(t.elem, defined) + "]"
	case "map":
		return "Dict[str, " + pyType(t.elem, defined) + "]"
	case "object":
		return "Dict[str, Any]"
	case "ref":
		if !defined[t.ref] {
			return strconv.Quote(t.ref.name)
		}
		return t.ref.name
	case "enum":
		var q []string
		for _, e := range t.enum {
			q = append(q, strconv.Quote(e))
		}
		return "Literal[" + strings.Join(q, ", ") + "]"
	}
	return "Any"
}

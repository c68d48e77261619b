package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/memos-go/memos/core"
)

// This file edits MCP client configuration files for memos setup: it puts
// one named server entry into a JSON or TOML file, or takes it out, and
// leaves everything else as it was. Each edit is checked by decoding the
// result: apart from the entry, it must hold exactly what the file held, or
// the edit is refused and the file stays untouched.

// errUnparsable marks a configuration file memos setup does not rewrite.
var errUnparsable = errors.New("not a file memos setup can change")

// editJSON returns src with the object at path (e.g. ["mcpServers"]) holding
// name → entry, or without name when entry is nil. Keys keep their order and
// values their text; the file is re-indented with its own indent unit.
// found tells whether name was there before, same whether its value was
// already entry.
func editJSON(src []byte, path []string, name string, entry any) (out []byte, found, same bool, err error) {
	if len(bytes.TrimSpace(src)) == 0 {
		src = []byte("{}")
	}
	var before any
	if err := json.Unmarshal(src, &before); err != nil {
		return nil, false, false, fmt.Errorf("%w: it is not valid JSON (%v)", errUnparsable, err)
	}
	var want any
	if entry != nil {
		raw, err := marshalJSON(entry)
		if err != nil {
			return nil, false, false, err
		}
		json.Unmarshal(raw, &want)
	}
	// What the file holds now, and what it must hold after the edit.
	cur, ok := before.(map[string]any)
	if !ok {
		return nil, false, false, fmt.Errorf("%w: its top level is not a JSON object", errUnparsable)
	}
	for i, k := range path {
		v, present := cur[k]
		if !present {
			cur = nil
			break
		}
		if cur, ok = v.(map[string]any); !ok {
			return nil, false, false, fmt.Errorf("%w: %q is not a JSON object", errUnparsable, strings.Join(path[:i+1], "."))
		}
	}
	var old any
	if cur != nil {
		old, found = cur[name]
	}
	if found && entry != nil && reflect.DeepEqual(old, want) {
		return src, true, true, nil
	}
	if !found && entry == nil {
		return src, false, false, nil
	}
	after, err := setJSON(bytes.TrimSpace(src), 0, jsonIndentUnit(src), path, name, entry)
	if err != nil {
		return nil, found, false, err
	}
	after = append(after, '\n')
	// Check: the result decodes to the file with just this entry changed.
	var got any
	if err := json.Unmarshal(after, &got); err != nil {
		return nil, found, false, fmt.Errorf("%w: the edited file would not decode (%v)", errUnparsable, err)
	}
	setDecoded(before, path, name, want, entry == nil)
	if !reflect.DeepEqual(got, before) {
		return nil, found, false, fmt.Errorf("%w: editing it would change more than the %s entry (duplicate keys?)", errUnparsable, name)
	}
	return after, found, false, nil
}

// marshalJSON encodes v without escaping <, > and & (they may be in paths).
func marshalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(buf.Bytes()), nil
}

// setDecoded applies the edit to a decoded document (the expected result).
func setDecoded(doc any, path []string, name string, want any, remove bool) {
	m := doc.(map[string]any)
	for _, k := range path {
		next, ok := m[k].(map[string]any)
		if !ok {
			if remove {
				return
			}
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	if remove {
		delete(m, name)
	} else {
		m[name] = want
	}
}

// setJSON rewrites the raw object src, which sits at nesting depth depth:
// at path, name is set to the entry val (appended when new) or removed when
// val is nil. Only the objects on the path are laid out anew, one member a
// line indented by unit; every other value keeps its text.
func setJSON(src []byte, depth int, unit string, path []string, name string, val any) ([]byte, error) {
	keys, vals, err := jsonMembers(src)
	if err != nil {
		return nil, err
	}
	key := name
	if len(path) > 0 {
		key = path[0]
	}
	i := slices.Index(keys, key)
	var nv []byte
	switch {
	case len(path) > 0:
		inner := []byte("{}")
		if i >= 0 {
			inner = vals[i]
		}
		if nv, err = setJSON(inner, depth+1, unit, path[1:], name, val); err != nil {
			return nil, err
		}
	case val != nil:
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.SetIndent(strings.Repeat(unit, depth+1), unit)
		if err := enc.Encode(val); err != nil {
			return nil, err
		}
		nv = bytes.TrimSpace(buf.Bytes())
	}
	switch {
	case nv == nil && i >= 0:
		keys, vals = slices.Delete(keys, i, i+1), slices.Delete(vals, i, i+1)
	case nv == nil:
	case i >= 0:
		vals[i] = nv
	default:
		keys, vals = append(keys, key), append(vals, nv)
	}
	if len(keys) == 0 {
		return []byte("{}"), nil
	}
	var b bytes.Buffer
	b.WriteString("{\n")
	for j, k := range keys {
		kb, _ := marshalJSON(k)
		b.WriteString(strings.Repeat(unit, depth+1))
		b.Write(kb)
		b.WriteString(": ")
		b.Write(vals[j])
		if j < len(keys)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString(strings.Repeat(unit, depth))
	b.WriteByte('}')
	return b.Bytes(), nil
}

// jsonMembers splits a JSON object into its keys and raw values, in order.
func jsonMembers(src []byte) (keys []string, vals [][]byte, err error) {
	dec := json.NewDecoder(bytes.NewReader(src))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, nil, fmt.Errorf("%w: expected a JSON object", errUnparsable)
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %v", errUnparsable, err)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, nil, fmt.Errorf("%w: %v", errUnparsable, err)
		}
		keys, vals = append(keys, t.(string)), append(vals, raw)
	}
	return keys, vals, nil
}

// jsonIndentUnit is the indent of the file's first indented line (two
// spaces if it has none).
func jsonIndentUnit(src []byte) string {
	for line := range bytes.SplitSeq(src, []byte("\n")) {
		trimmed := bytes.TrimLeft(line, " \t")
		if n := len(line) - len(trimmed); n > 0 && len(trimmed) > 0 {
			return string(line[:n])
		}
	}
	return "  "
}

// tomlHeader matches a line that may be a table header: [a.b] or [[a.b]].
var tomlHeader = regexp.MustCompile(`^\s*\[`)

// editTOML returns src with the table [table.name] (e.g. mcp_servers.memos)
// set to entry or, when entry is nil, removed. The user's text — comments,
// order, formatting — stays as it was: the old table's lines are cut out and
// the new table is appended at the end.
func editTOML(src []byte, table, name string, entry any) (out []byte, found, same bool, err error) {
	var before map[string]any
	if err := toml.Unmarshal(src, &before); err != nil {
		return nil, false, false, fmt.Errorf("%w: it is not valid TOML (%v)", errUnparsable, err)
	}
	if before == nil {
		before = map[string]any{}
	}
	var want map[string]any
	var block []byte
	if entry != nil {
		body, err := toml.Marshal(entry)
		if err != nil {
			return nil, false, false, err
		}
		block = append([]byte("["+table+"."+name+"]\n"), body...)
		var probe map[string]any
		if err := toml.Unmarshal(block, &probe); err != nil {
			return nil, false, false, fmt.Errorf("encode the %s entry: %v", name, err)
		}
		want = probe[table].(map[string]any)[name].(map[string]any)
	}
	var old any
	if t, ok := before[table].(map[string]any); ok {
		old, found = t[name]
	} else if _, ok := before[table]; ok {
		return nil, false, false, fmt.Errorf("%w: %q is not a table", errUnparsable, table)
	}
	if found && entry != nil && reflect.DeepEqual(old, any(want)) {
		return src, true, true, nil
	}
	if !found && entry == nil {
		return src, false, false, nil
	}

	// Cut the lines of [table.name] and its sub-tables, up to the next header.
	var b bytes.Buffer
	cutting := false
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(make([]byte, 0, 64*1024), len(src)+1)
	for sc.Scan() {
		line := sc.Text()
		if tomlHeader.MatchString(line) {
			if p := tomlHeaderPath(line); p != nil {
				cutting = len(p) >= 2 && p[0] == table && p[1] == name
			}
		}
		if !cutting {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	out = b.Bytes()
	if block != nil {
		out = bytes.TrimRight(out, "\n")
		if len(out) > 0 {
			out = append(out, "\n\n"...)
		}
		out = append(out, block...)
	}

	// Check: apart from the entry the result holds what the file held.
	var after map[string]any
	if err := toml.Unmarshal(out, &after); err != nil {
		return nil, found, false, fmt.Errorf("%w: the %s.%s entry is written in a form memos setup cannot replace (%v)", errUnparsable, table, name, err)
	}
	if after == nil {
		after = map[string]any{}
	}
	if entry != nil {
		got, _ := after[table].(map[string]any)
		if !reflect.DeepEqual(got[name], any(want)) {
			return nil, found, false, fmt.Errorf("%w: the %s.%s entry is written in a form memos setup cannot replace", errUnparsable, table, name)
		}
	}
	// (An empty table may come or go with the entry: [table.name] alone
	// defines table.)
	strip := func(m map[string]any) {
		if t, ok := m[table].(map[string]any); ok {
			delete(t, name)
			if len(t) == 0 {
				delete(m, table)
			}
		}
	}
	strip(before)
	strip(after)
	if !reflect.DeepEqual(before, after) {
		return nil, found, false, fmt.Errorf("%w: the %s.%s entry is written in a form memos setup cannot replace without changing other settings", errUnparsable, table, name)
	}
	return out, found, false, nil
}

// tomlHeaderPath is the key path of a table header line, or nil when the
// line is not one (decoding the line alone tells).
func tomlHeaderPath(line string) []string {
	var m map[string]any
	if toml.Unmarshal([]byte(line), &m) != nil || len(m) != 1 {
		return nil
	}
	var path []string
	var v any = m
	for {
		switch t := v.(type) {
		case map[string]any:
			if len(t) == 0 {
				return path
			}
			if len(t) != 1 {
				return nil
			}
			for k, x := range t {
				path, v = append(path, k), x
			}
		case []any: // [[array.table]]
			if len(t) != 1 {
				return nil
			}
			v = t[0]
		default:
			return nil
		}
	}
}

// writeDiff writes a unified diff of a → b (line based, three lines of
// context) under the given file names.
func writeDiff(w io.Writer, nameA, nameB string, a, b []byte) {
	la, lb := splitLines(a), splitLines(b)
	// Trim the common head and tail: an edit changes one region.
	pre := 0
	for pre < len(la) && pre < len(lb) && la[pre] == lb[pre] {
		pre++
	}
	suf := 0
	for suf < len(la)-pre && suf < len(lb)-pre && la[len(la)-1-suf] == lb[len(lb)-1-suf] {
		suf++
	}
	ma, mb := la[pre:len(la)-suf], lb[pre:len(lb)-suf]
	if len(ma) == 0 && len(mb) == 0 {
		return
	}
	ops := editScript(ma, mb)
	all := make([]op, 0, len(la)+len(mb))
	for _, l := range la[:pre] {
		all = append(all, op{' ', l})
	}
	all = append(all, ops...)
	for _, l := range la[len(la)-suf:] {
		all = append(all, op{' ', l})
	}
	fmt.Fprintf(w, "--- %s\n+++ %s\n", nameA, nameB)
	writeHunks(w, all)
}

// op is a line of an edit script: kept (' '), removed ('-') or added ('+').
type op struct {
	kind byte
	line string
}

// editScript returns the edits that turn a into b: a longest common
// subsequence when the lists are small, else all of a removed and all of b
// added.
func editScript(ma, mb []string) []op {
	var ops []op
	if len(ma)*len(mb) <= 4_000_000 {
		n, m := len(ma), len(mb)
		lcs := make([][]int32, n+1)
		for i := range lcs {
			lcs[i] = make([]int32, m+1)
		}
		for i := n - 1; i >= 0; i-- {
			for j := m - 1; j >= 0; j-- {
				if ma[i] == mb[j] {
					lcs[i][j] = lcs[i+1][j+1] + 1
				} else {
					lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
				}
			}
		}
		i, j := 0, 0
		for i < n || j < m {
			switch {
			case i < n && j < m && ma[i] == mb[j]:
				ops = append(ops, op{' ', ma[i]})
				i, j = i+1, j+1
			case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
				ops = append(ops, op{'-', ma[i]})
				i++
			default:
				ops = append(ops, op{'+', mb[j]})
				j++
			}
		}
	} else {
		for _, l := range ma {
			ops = append(ops, op{'-', l})
		}
		for _, l := range mb {
			ops = append(ops, op{'+', l})
		}
	}
	return ops
}

// writeHunks writes the changes of all, with three lines of context, as
// unified-diff hunks.
func writeHunks(w io.Writer, all []op) {
	const ctx = 3
	// Hunks: runs of changes with up to 2*ctx unchanged lines between them.
	for k := 0; k < len(all); {
		if all[k].kind == ' ' {
			k++
			continue
		}
		start := max(0, k-ctx)
		end := k
		for end < len(all) {
			if all[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(all) && all[run].kind == ' ' {
				run++
			}
			if run == len(all) || run-end > 2*ctx {
				end = min(len(all), end+ctx)
				break
			}
			end = run
		}
		// Line numbers of the hunk in a and b.
		sa, sb := 1, 1
		for _, o := range all[:start] {
			if o.kind != '+' {
				sa++
			}
			if o.kind != '-' {
				sb++
			}
		}
		na, nb := 0, 0
		for _, o := range all[start:end] {
			if o.kind != '+' {
				na++
			}
			if o.kind != '-' {
				nb++
			}
		}
		if na == 0 {
			sa--
		}
		if nb == 0 {
			sb--
		}
		fmt.Fprintf(w, "@@ -%d,%d +%d,%d @@\n", sa, na, sb, nb)
		for _, o := range all[start:end] {
			fmt.Fprintf(w, "%c%s\n", o.kind, o.line)
		}
		k = end
	}
}

func splitLines(b []byte) []string {
	s := strings.TrimSuffix(string(b), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// unparsable turns an errUnparsable into the user's error: the file is
// left alone, and here is the entry to add by hand.
func unparsable(err error, file, name string, snippet []byte) error {
	if !errors.Is(err, errUnparsable) {
		return err
	}
	msg := strings.TrimPrefix(err.Error(), errUnparsable.Error()+": ")
	return core.Invalidf("%s: %s; memos setup changed nothing. Fix the file, or add the %s entry by hand:\n%s", file, msg, name, snippet)
}

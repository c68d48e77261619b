package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memos-go/memos/api"
	"github.com/memos-go/memos/api/server"
	"github.com/memos-go/memos/core"
)

// The three callers of the authorization matrix.
const (
	adminToken  = "matrix-admin-0123456789"
	agentAToken = "matrix-agent-a-0123456789"
	agentBToken = "matrix-agent-b-0123456789"
)

type caller struct {
	name, token string
	ns          string // "" for admin: every namespace
}

var callers = []caller{{"admin", adminToken, ""}, {"agent:a token", agentAToken, "agent:a"}, {"agent:b token", agentBToken, "agent:b"}}

// cell is one call of the matrix: its target memory (a quarantined lesson
// with two versions, so that every operation on an id applies to it), a
// partner in the same namespace it is linked to, and names unique to it.
type cell struct {
	n               int
	target, partner *core.Memory
	source, session string
}

// fillers build an operation's request field by field, by JSON name and Go
// type; a field that is not here is left out. An operation with a required
// field that is not here fails TestAuthorizationMatrix: add one.
var fillers = map[string]func(t reflect.Type, c *cell) (any, bool){
	"id":   idOf(func(c *cell) int64 { return c.target.ID }),
	"from": idOf(func(c *cell) int64 { return c.target.ID }),
	// set-validity's bound (a pointer: absent means unchanged), not a new
	// memory's attribute.
	"valid_from": func(t reflect.Type, c *cell) (any, bool) { return "2001-01-01", t.Kind() == reflect.Pointer },
	"to":         idOf(func(c *cell) int64 { return c.partner.ID }),
	"version": func(t reflect.Type, c *cell) (any, bool) {
		return 1, t.Kind() == reflect.Int
	},
	"content":  text(func(c *cell) string { return fmt.Sprintf("matrix note %d about harbour cranes", c.n) }),
	"query":    text(func(c *cell) string { return "harbour cranes" }),
	"guidance": text(func(c *cell) string { return fmt.Sprintf("check crane %d before lifting", c.n) }),
	"source":   text(func(c *cell) string { return c.source }),
	"session":  text(func(c *cell) string { return c.session }),
	"success": func(t reflect.Type, c *cell) (any, bool) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		return true, t.Kind() == reflect.Bool
	},
	// quarantine-reject's reason (source and session are a memory's).
	"reason": text(func(c *cell) string { return fmt.Sprintf("matrix check %d", c.n) }),
	// import's export: a header announcing nothing (what a whole-store
	// operation may do is the matrix's question, not what import restores).
	"jsonl": text(func(*cell) string {
		return `{"format":"memos-export","version":1,"exported_at":"2025-01-01T00:00:00Z","model":{},"memories":0,"edges":0}` + "\n"
	}),
	"turns": func(t reflect.Type, c *cell) (any, bool) {
		return []obj{{"speaker": "user", "text": fmt.Sprintf("crane %d is back in service", c.n)}}, t.Kind() == reflect.Slice
	},
	"memories": func(t reflect.Type, c *cell) (any, bool) {
		return []obj{{"content": fmt.Sprintf("crane %d lifts forty tonnes", c.n)}}, t.Kind() == reflect.Slice
	},
}

func idOf(f func(*cell) int64) func(reflect.Type, *cell) (any, bool) {
	return func(t reflect.Type, c *cell) (any, bool) { return f(c), t.Kind() == reflect.Int64 }
}

func text(f func(*cell) string) func(reflect.Type, *cell) (any, bool) {
	return func(t reflect.Type, c *cell) (any, bool) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		return f(c), t.Kind() == reflect.String
	}
}

func pick(fs ...func(reflect.Type, *cell) (any, bool)) func(reflect.Type, *cell) (any, bool) {
	return func(t reflect.Type, c *cell) (any, bool) {
		for _, f := range fs {
			if v, ok := f(t, c); ok {
				return v, true
			}
		}
		return nil, false
	}
}

// field is one JSON field of an operation's input (embedded structs
// flattened, as callers see them).
type field struct {
	name     string
	typ      reflect.Type
	required bool
}

func fields(t reflect.Type) []field {
	var out []field
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			out = append(out, fields(f.Type)...)
			continue
		}
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, field{name, f.Type, !strings.Contains(opts, "omitempty") && !strings.Contains(opts, "omitzero")})
	}
	return out
}

// request builds o's request for c by caller who: the admin names the
// target's namespace, a limited token none (its only namespace applies).
func request(o *api.Op, c *cell, who caller) (obj, error) {
	body := obj{}
	for _, f := range fields(o.In) {
		if f.name == "namespace" {
			if who.ns == "" {
				body["namespace"] = c.target.Namespace
			}
			continue
		}
		fill, ok := fillers[f.name]
		var v any
		if ok {
			v, ok = fill(f.typ, c)
		}
		switch {
		case ok:
			body[f.name] = v
		case f.required:
			return nil, fmt.Errorf("operation %s: the authorization matrix cannot fill its required field %q (%s): add a filler for it in api/server/authz_test.go so that the operation is covered", o.Name, f.name, f.typ)
		}
	}
	return body, nil
}

// targetsMemory reports whether o names a memory (id, or an edge's from).
func targetsMemory(o *api.Op) bool {
	for _, f := range fields(o.In) {
		if (f.name == "id" || f.name == "from") && f.typ.Kind() == reflect.Int64 {
			return true
		}
	}
	return false
}

// expect is the rule under test: the admin may do anything; a token limited
// to a namespace may not call whole-store operations, reads its namespace
// and default, changes only its namespace, and does not see the others.
func expect(o *api.Op, who caller, targetNS string) string {
	switch {
	case who.ns == "":
		return ""
	case o.Global:
		return "forbidden"
	case !targetsMemory(o), targetNS == who.ns:
		return ""
	case targetNS == core.DefaultNamespace && o.ReadOnly:
		return ""
	case targetNS == core.DefaultNamespace:
		return "forbidden"
	}
	return "not_found"
}

// TestAuthorizationMatrix calls every operation of the table, as each of
// three callers (the admin, a token limited to agent:a, one limited to
// agent:b), on a memory in agent:a, in default and in agent:b, over HTTP and
// over /mcp, and checks the answer against expect: a refused call changes
// nothing at all, and a limited token's call changes nothing outside its
// namespace. Operations added to the table are covered without a change
// here, unless they need a field the fillers do not know (then it fails).
func TestAuthorizationMatrix(t *testing.T) {
	for _, o := range api.Ops() {
		t.Run(o.Name, func(t *testing.T) { authorizationMatrix(t, o) })
	}
}

// authorizationMatrix runs one operation's rows of the matrix on a server
// of its own (a small store keeps the before/after comparisons cheap).
func authorizationMatrix(t *testing.T, o *api.Op) {
	l := start(t, server.Options{Tokens: []server.Token{
		{Name: "admin", Token: adminToken},
		{Name: "agent-a", Token: agentAToken, Namespaces: []string{"agent:a"}},
		{Name: "agent-b", Token: agentBToken, Namespaces: []string{"agent:b"}},
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sessions := map[string]*mcp.ClientSession{}
	for _, who := range callers {
		client := mcp.NewClient(&mcp.Implementation{Name: "matrix", Version: "1"}, nil)
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: l.url + "/mcp",
			HTTPClient: &http.Client{Transport: bearer{who.token}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		sessions[who.token] = cs
	}
	transports := map[string]func(who caller, body obj) (kind, answer string){
		"http": func(who caller, body obj) (string, string) {
			r := l.call(t, o.Name, who.token, body, nil)
			if r.status == http.StatusOK {
				return "", string(r.body)
			}
			return r.errKind(), string(r.body)
		},
		"mcp": func(who caller, body obj) (string, string) {
			res, err := sessions[who.token].CallTool(ctx, &mcp.CallToolParams{Name: o.Tool, Arguments: body})
			if err != nil {
				t.Fatalf("%s: %v", o.Tool, err)
			}
			text := res.Content[0].(*mcp.TextContent).Text
			if !res.IsError {
				return "", text
			}
			var e api.ErrorBody
			json.Unmarshal([]byte(text), &e)
			return e.Error.Kind, text
		},
	}
	// A cell serves every call until one writes to the store: a refused
	// call (or a read) leaves it as it was, which the checks below prove,
	// so only a call that changed something needs a fresh one. The store
	// as rendered after a call is the next call's "before" unless a cell
	// was made in between.
	n := 0
	cells := map[string]*cell{}
	var before map[string]string
	var seq uint64
	for _, tr := range []string{"http", "mcp"} {
		for _, who := range callers {
			for _, ns := range []string{"agent:a", core.DefaultNamespace, "agent:b"} {
				n++
				c := cells[ns]
				if c == nil || before == nil {
					c = matrixCell(t, l.eng, ns, n)
					cells[ns] = c
					before, seq = storeByNamespace(t, l.eng)
				}
				body, err := request(o, c, who)
				if err != nil {
					t.Fatal(err)
				}
				want := expect(o, who, ns)
				got, answer := transports[tr](who, body)
				where := fmt.Sprintf("%s %s by the %s on a memory in %s", tr, o.Name, who.name, ns)
				if got != want {
					t.Errorf("%s: %s, want %s: %s", where, or(got, "ok"), or(want, "ok"), answer)
				}
				if who.ns != "" && ns != who.ns && ns != core.DefaultNamespace && strings.Contains(answer, ns) {
					t.Errorf("%s: the answer names the other namespace: %s", where, answer)
				}
				after, seqAfter := storeByNamespace(t, l.eng)
				for space := range union(before, after) {
					if (got != "" || who.ns != "" && space != who.ns) && after[space] != before[space] {
						t.Errorf("%s (%s) changed namespace %s: %s", where, or(got, "ok"), space, firstDiff(before[space], after[space]))
					}
				}
				if got != "" && seqAfter != seq {
					t.Errorf("%s was refused (%s) but wrote to the store (seq %d → %d)", where, got, seq, seqAfter)
				}
				before = after
				if seqAfter != seq {
					clear(cells) // the call may have used up any of them
				}
				seq = seqAfter
			}
		}
	}
}

func union(a, b map[string]string) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// firstDiff shows the first line that differs between two renderings.
func firstDiff(before, after string) string {
	bl, al := strings.Split(before, "\n"), strings.Split(after, "\n")
	for i := range max(len(bl), len(al)) {
		var b, a string
		if i < len(bl) {
			b = bl[i]
		}
		if i < len(al) {
			a = al[i]
		}
		if a != b {
			return fmt.Sprintf("\nbefore %s\nafter  %s", b, a)
		}
	}
	return "(same)"
}

func or(s, dflt string) string {
	if s == "" {
		return dflt
	}
	return s
}

// matrixCell stores a cell's memories in namespace ns with the engine.
func matrixCell(t *testing.T, eng *core.Engine, ns string, n int) *cell {
	t.Helper()
	ctx := context.Background()
	h, err := eng.In(ns)
	if err != nil {
		t.Fatal(err)
	}
	c := &cell{n: n, source: fmt.Sprintf("matrix:cell-%d", n), session: fmt.Sprintf("matrix:session-%d", n)}
	c.target, err = h.Remember(ctx, core.Input{Content: fmt.Sprintf("when lifting, check crane %d twice", n), Type: core.TypeLesson,
		Source: c.source, Session: c.session, Quarantine: true})
	if err != nil {
		t.Fatal(err)
	}
	if c.target, err = h.Update(ctx, c.target.ID, core.Patch{Significance: new(6)}); err != nil {
		t.Fatal(err)
	}
	if c.partner, err = h.Remember(ctx, core.Input{Content: fmt.Sprintf("crane %d stands on quay %d", n, n%7), Session: c.session}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Link(ctx, core.Edge{From: c.target.ID, To: c.partner.ID}); err != nil {
		t.Fatal(err)
	}
	return c
}

// storeByNamespace renders each namespace's memories (every status, without
// access statistics) with the edges that start at them, and the store's
// change-log seq.
func storeByNamespace(t *testing.T, eng *core.Engine) (map[string]string, uint64) {
	t.Helper()
	out := map[string]*strings.Builder{}
	var seq uint64
	err := eng.Backend().View(context.Background(), func(tx core.ReadTx) error {
		var err error
		if seq, err = tx.Seq(); err != nil {
			return err
		}
		return tx.Scan(core.ScanOptions{}, func(m *core.Memory) error {
			es, err := tx.Edges(m.ID)
			if err != nil {
				return err
			}
			var from []core.Edge
			for _, e := range es {
				if e.From == m.ID {
					from = append(from, e)
				}
			}
			m.AccessCount, m.LastAccessedAt, m.Embedding.Vector = 0, time.Time{}, nil
			b, err := json.Marshal(struct {
				M *core.Memory
				E []core.Edge
			}{m, from})
			if err != nil {
				return err
			}
			sb := out[m.Namespace]
			if sb == nil {
				sb = &strings.Builder{}
				out[m.Namespace] = sb
			}
			sb.Write(b)
			sb.WriteByte('\n')
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	res := map[string]string{}
	for ns, sb := range out {
		res[ns] = sb.String()
	}
	return res, seq
}

// A token limited to namespaces learns nothing of the others from stats:
// its scope's counts, its scope's vectors, no store-wide figures; over
// HTTP and /mcp alike.
func TestScopedStats(t *testing.T) {
	l := start(t, server.Options{Tokens: []server.Token{
		{Name: "admin", Token: adminToken},
		{Name: "agent-a", Token: agentAToken, Namespaces: []string{"agent:a"}},
	}})
	for _, m := range []obj{{"content": "the office is in Lisbon"}, {"content": "agent a keeps notes", "namespace": "agent:a"},
		{"content": "agent b's first secret", "namespace": "agent:b"}, {"content": "agent b's second secret", "namespace": "agent:b"}} {
		if r := l.call(t, "remember", adminToken, m, nil); r.status != http.StatusOK {
			t.Fatalf("remember: %d %s", r.status, r.body)
		}
	}
	check := func(how string, b []byte) {
		t.Helper()
		var st map[string]any
		if err := json.Unmarshal(b, &st); err != nil {
			t.Fatalf("%s: %v: %s", how, err, b)
		}
		for _, k := range []string{"seq", "store_memories", "backend", "vector_index_bytes", "vector_snapshot_bytes"} {
			if _, ok := st[k]; ok {
				t.Errorf("%s: stats for a token limited to agent:a carry the store-wide %s: %s", how, k, b)
			}
		}
		if st["memories"] != 2.0 || st["vectors"] != 2.0 || len(st["by_namespace"].(map[string]any)) != 2 {
			t.Errorf("%s: stats for agent:a = %s; want 2 memories and 2 vectors in agent:a and default", how, b)
		}
	}
	r := l.call(t, "stats", agentAToken, obj{}, nil)
	if r.status != http.StatusOK {
		t.Fatalf("stats: %d %s", r.status, r.body)
	}
	check("http", r.body)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "stats-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: l.url + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{agentAToken}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "memos_stats", Arguments: obj{}})
	if err != nil || res.IsError {
		t.Fatalf("memos_stats: %v %+v", err, res)
	}
	check("mcp", mustJSON(t, res.StructuredContent))

	// The admin still sees the store.
	var st core.Stats
	if r := l.call(t, "stats", adminToken, obj{}, &st); r.status != http.StatusOK || st.StoreMemories != 4 || st.Seq == 0 {
		t.Errorf("admin stats: %d %s", r.status, r.body)
	}
}

// Text that is not valid UTF-8 is refused with the field it is in, never
// stored with U+FFFD in its place: over HTTP (raw bytes and \u escapes of
// half a surrogate pair) and over /mcp.
func TestInvalidUTF8(t *testing.T) {
	l := start(t, server.Options{})
	cases := []struct{ op, body, want string }{
		{"remember", "{\"content\":\"caf\xe9 au lait\"}", "content is not valid UTF-8 (byte 4)"},
		{"remember", `{"content":"half a pair \ud83d here"}`, "content is not valid UTF-8 (byte 13)"},
		{"remember", "{\"content\":\"fine\",\"metadata\":{\"mood\":\"\xff\"}}", "metadata.mood is not valid UTF-8 (byte 1)"},
		{"remember-batch", "{\"memories\":[{\"content\":\"fine\"},{\"content\":\"fine\",\"entities\":[\"B\xffb\"]}]}", "memories[1].entities[0] is not valid UTF-8 (byte 2)"},
		{"capture", "{\"session\":\"s1\",\"turns\":[{\"text\":\"\xc3\"}]}", "turns[0].text is not valid UTF-8 (byte 1)"},
		{"forget-source", "{\"source\":\"file:\xff\"}", "source is not valid UTF-8 (byte 6)"},
		{"search", "{\"query\":\"caf\xe9\"}", "query is not valid UTF-8 (byte 4)"},
	}
	for _, c := range cases {
		r := l.do(t, http.MethodPost, "/api/mem/"+c.op, "", []byte(c.body))
		if r.status != http.StatusBadRequest || r.errKind() != "invalid" || !strings.Contains(string(r.body), c.want) {
			t.Errorf("http %s %q: %d %s; want 400 naming %q", c.op, c.body, r.status, r.body, c.want)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "utf8-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: l.url + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for _, c := range cases {
		o, _ := api.Lookup(c.op)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: o.Tool, Arguments: json.RawMessage(c.body)})
		if err != nil {
			t.Fatalf("%s: %v", o.Tool, err)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		if !res.IsError || !strings.Contains(text, `"kind":"invalid"`) || !strings.Contains(text, c.want) {
			t.Errorf("mcp %s %q: %s; want an invalid-input error naming %q", o.Tool, c.body, text, c.want)
		}
	}
	var st core.Stats
	l.must(t, "stats", obj{}, &st)
	if st.Memories != 0 {
		t.Errorf("refused requests stored %d memories", st.Memories)
	}
}

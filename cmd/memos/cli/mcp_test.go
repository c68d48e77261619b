package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// mcpSession is `memos mcp` run in process, talking over pipes.
type mcpSession struct {
	t     *testing.T
	in    *io.PipeWriter
	lines chan string
	done  chan int
	mu    sync.Mutex
	errb  bytes.Buffer
}

func (s *mcpSession) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.errb.Write(p)
}

func startMCP(t *testing.T, e *env) *mcpSession {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &mcpSession{t: t, in: inW, lines: make(chan string, 16), done: make(chan int, 1)}
	go func() {
		code := run(context.Background(), e.environ, []string{"mcp"}, inR, outW, s)
		outW.Close()
		inR.Close()
		s.done <- code
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
		close(s.lines)
	}()
	t.Cleanup(func() { inW.Close() })
	return s
}

func (s *mcpSession) send(line string) {
	s.t.Helper()
	sent := make(chan error, 1)
	go func() { _, err := s.in.Write([]byte(line + "\n")); sent <- err }()
	select {
	case err := <-sent:
		if err != nil {
			s.t.Fatalf("send %.80q: %v (the server stopped reading)\n%s", line, err, s.log())
		}
	case code := <-s.done:
		s.t.Fatalf("send %.80q: memos mcp exited %d\n%s", line, code, s.log())
	case <-time.After(time.Minute):
		s.t.Fatalf("send %.80q: the server does not read", line)
	}
}

// rpcMessage is a JSON-RPC message or a batch of them as received.
type rpcMessage struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (s *mcpSession) recvLine(what string) string {
	s.t.Helper()
	select {
	case l, ok := <-s.lines:
		if !ok {
			code := <-s.done
			s.t.Fatalf("waiting for %s: memos mcp closed its output (exit %d)\n%s", what, code, s.log())
		}
		return l
	case <-time.After(time.Minute):
		s.t.Fatalf("waiting for %s: no answer within a minute\n%s", what, s.log())
	}
	return ""
}

func (s *mcpSession) recv(what string) rpcMessage {
	s.t.Helper()
	l := s.recvLine(what)
	var m rpcMessage
	if err := json.Unmarshal([]byte(l), &m); err != nil {
		s.t.Fatalf("%s: answer is not one JSON-RPC message: %v\n%s", what, err, l)
	}
	return m
}

func (s *mcpSession) log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.errb.String()
}

// initialize opens the MCP session with the given protocol version.
func (s *mcpSession) initialize(version string) {
	s.t.Helper()
	s.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`)
	if m := s.recv("initialize"); m.Error != nil || !strings.Contains(string(m.Result), version) {
		s.t.Fatalf("initialize: %+v %s", m.Error, m.Result)
	}
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// listTools calls tools/list with id and checks the answer.
func (s *mcpSession) listTools(id int) {
	s.t.Helper()
	s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, id))
	m := s.recv("tools/list")
	if string(m.ID) != fmt.Sprint(id) || m.Error != nil || !strings.Contains(string(m.Result), "memory_store") {
		s.t.Fatalf("tools/list %d answered id %s, error %+v, result %.200s", id, m.ID, m.Error, m.Result)
	}
}

// TestMCPStdioMalformedLines feeds `memos mcp` lines that are not JSON-RPC
// messages, each followed by a valid call: each is answered with the
// JSON-RPC error its kind calls for (-32700 not JSON, -32600 not a message;
// the id echoed when the request has a readable one), and the call after it
// is answered too — the session goes on.
func TestMCPStdioMalformedLines(t *testing.T) {
	s := startMCP(t, newEnv(t))
	s.initialize("2025-06-18")
	cases := []struct {
		name, line string
		code       int
		id         string
	}{
		{"truncated object", `{"jsonrpc":"2.0","id":1,"method":"tools/li`, -32700, "null"},
		{"garbage", `garbage`, -32700, "null"},
		{"not UTF-8", "\xff\xfe", -32700, "null"},
		{"two values on a line", `{"jsonrpc":"2.0","method":"ping"} {}`, -32700, "null"},
		{"deep nesting", strings.Repeat("[", 100_000), -32700, "null"},
		{"deep but complete", strings.Repeat("[", 1500) + strings.Repeat("]", 1500), -32700, "null"},
		{"empty array", `[]`, -32600, "null"},
		{"batch in 2025-06-18", `[{"jsonrpc":"2.0","id":77,"method":"tools/list"}]`, -32600, "null"},
		{"number", `42`, -32600, "null"},
		{"string", `"tools/list"`, -32600, "null"},
		{"null", `null`, -32600, "null"},
		{"no jsonrpc", `{"id":7,"method":"tools/list"}`, -32600, "7"},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":"x","method":"tools/list"}`, -32600, `"x"`},
		{"id true", `{"jsonrpc":"2.0","id":true,"method":"tools/list"}`, -32600, "null"},
		{"method a number", `{"jsonrpc":"2.0","id":8,"method":5}`, -32600, "8"},
		{"params a number", `{"jsonrpc":"2.0","id":9,"method":"tools/list","params":5}`, -32600, "9"},
		{"neither request nor response", `{"jsonrpc":"2.0"}`, -32600, "null"},
		{"error a string", `{"jsonrpc":"2.0","id":10,"error":"no"}`, -32600, "null"},
	}
	for i, c := range cases {
		s.send(c.line)
		m := s.recv(c.name)
		if m.Error == nil || m.Error.Code != c.code || string(m.ID) != c.id {
			t.Errorf("%s: answered id %s, error %+v; want code %d, id %s", c.name, m.ID, m.Error, c.code, c.id)
		} else if strings.Contains(m.Error.Message, "jsonrpc2") || strings.Contains(m.Error.Message, "Unmarshal") {
			t.Errorf("%s: the error message names Go internals: %s", c.name, m.Error.Message)
		}
		s.listTools(100 + i)
	}
	// A blank line is no message: nothing answers it.
	s.send("")
	s.listTools(1000)
	s.in.Close()
	select {
	case code := <-s.done:
		if code != 0 {
			t.Errorf("memos mcp exited %d after the client closed its input\n%s", code, s.log())
		}
	case <-time.After(time.Minute):
		t.Fatal("memos mcp did not exit after the client closed its input")
	}
}

// TestMCPStdioBatch: under MCP 2025-03-26, which has batches, a batch's
// valid messages are answered as one batch and its invalid ones with one
// array of errors.
func TestMCPStdioBatch(t *testing.T) {
	s := startMCP(t, newEnv(t))
	s.initialize("2025-03-26")
	s.send(`[{"jsonrpc":"2.0","id":60,"method":"tools/list"},42,{"jsonrpc":"2.0","id":61,"method":"ping"},{"id":62,"method":"ping"}]`)
	var errs, answers []rpcMessage
	for range 2 {
		l := s.recvLine("batch")
		var batch []rpcMessage
		if err := json.Unmarshal([]byte(l), &batch); err != nil {
			t.Fatalf("batch answer is not an array: %v\n%.300s", err, l)
		}
		if len(batch) > 0 && batch[0].Error != nil {
			errs = batch
		} else {
			answers = batch
		}
	}
	if len(errs) != 2 || errs[0].Error.Code != -32600 || string(errs[0].ID) != "null" || string(errs[1].ID) != "62" {
		t.Errorf("errors of the batch: %+v", errs)
	}
	if len(answers) != 2 || string(answers[0].ID) != "60" || string(answers[1].ID) != "61" || answers[0].Error != nil || answers[1].Error != nil {
		t.Errorf("answers of the batch: %+v", answers)
	}
	s.listTools(63)
}

// TestMCPStdioPiped is `printf '…' | memos mcp`: the input ends right after
// the last call, and every call is still answered before memos exits.
func TestMCPStdioPiped(t *testing.T) {
	e := newEnv(t)
	input := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`garbage`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"memory_store","arguments":{"content":"Alice prefers tea"}}}`,
	}, "\n") + "\n"
	r := e.runStdin(input, "mcp")
	if r.code != 0 {
		t.Fatalf("memos mcp exited %d\n%s", r.code, r.stderr)
	}
	var ids []string
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var m rpcMessage
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not a JSON-RPC message: %v\n%s", err, l)
		}
		ids = append(ids, string(m.ID))
	}
	// The calls run concurrently: their answers come in either order.
	slices.Sort(ids)
	if strings.Join(ids, " ") != "1 2 3 null" {
		t.Errorf("answers to ids %v, want 1, 2, 3 and null (the garbage line)\n%.2000s", ids, r.stdout)
	}
}

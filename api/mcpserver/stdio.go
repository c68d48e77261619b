package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Stdio returns the transport of MCP over a pair of byte streams, the way
// `memos mcp` talks on standard input and output: one JSON-RPC message per
// line, as MCP's stdio transport defines it.
//
// The SDK's own stdio transport ends the session at the first line it
// cannot decode, so one bad line loses every later call. Stdio answers such
// a line with a JSON-RPC error instead and goes on reading:
//
//   - -32700 (parse error, id null): the line is not JSON, or nests deeper
//     than 1000 levels;
//   - -32600 (invalid request): JSON that is not a message — a number, a
//     string, an array where batches are not allowed, an empty batch, an
//     object without "jsonrpc": "2.0", a method that is not a string, an id
//     that is neither a string nor a number, a response without an id. The
//     id of a request is echoed when it can be read; otherwise it is null.
//
// A batch (a JSON array of messages) is taken under the protocol versions
// that have batches (before 2025-06-18) once the session is initialized; its
// valid messages go on as one batch and the invalid ones are answered
// together in one array. Blank lines are skipped; a line longer than
// mcp.DefaultMaxLineLength is answered with -32600 and skipped. At the end
// of the input, the calls in flight are answered before the session ends
// (the SDK alone would cancel them), for up to a minute.
func Stdio(r io.Reader, w io.Writer) mcp.Transport {
	return &stdio{r: r, w: w}
}

type stdio struct {
	r io.Reader
	w io.Writer
}

// eofGrace bounds how long the end of the input waits for the answers to
// the calls in flight (each call has its own, shorter, timeout).
const eofGrace = time.Minute

// maxDepth is the deepest nesting the SDK decodes (its internal JSON
// package refuses more).
const maxDepth = 1000

// Connect starts reading r. The SDK reads the lines that pass from a pipe;
// when it closes the connection, the pipe's end makes the reader stop at its
// next line.
func (t *stdio) Connect(ctx context.Context) (mcp.Connection, error) {
	pr, pw := io.Pipe()
	in := &pipeReader{PipeReader: pr, closed: make(chan struct{})}
	out := &stdioWriter{w: t.w, pending: map[jsonrpc.ID]bool{}}
	go (&lineFilter{out: out, pass: pw, closed: in.closed, max: mcp.DefaultMaxLineLength}).run(t.r)
	return (&mcp.IOTransport{Reader: in, Writer: out, MaxLineLength: -1}).Connect(ctx)
}

// pipeReader is the SDK's end of the pipe; closed is closed with it.
type pipeReader struct {
	*io.PipeReader
	once   sync.Once
	closed chan struct{}
}

func (p *pipeReader) Close() error {
	p.once.Do(func() { close(p.closed) })
	return p.PipeReader.Close()
}

// stdioWriter serialises the SDK's writes (one Write per message) and the
// filter's error answers. It watches the answer to initialize for the
// protocol version the session speaks, and which calls passed on are still
// unanswered: at the end of the input the SDK would cancel them, so the
// filter holds the end back until they are answered.
type stdioWriter struct {
	mu      sync.Mutex
	w       io.Writer
	initID  *jsonrpc.ID // the client's initialize call, until it is answered
	version string      // the negotiated protocol version
	pending map[jsonrpc.ID]bool
	drain   chan struct{} // closed when pending empties, if not nil
}

func (o *stdioWriter) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.initID != nil || len(o.pending) > 0 {
		o.sniff(p)
	}
	return o.w.Write(p)
}

// sniff notes the answers in p (a message or a batch): calls no longer
// pending and the protocol version if p answers initialize.
func (o *stdioWriter) sniff(p []byte) {
	for _, raw := range splitBatch(bytes.TrimSpace(p)) {
		msg, err := jsonrpc.DecodeMessage(raw)
		resp, ok := msg.(*jsonrpc.Response)
		if err != nil || !ok {
			continue
		}
		delete(o.pending, resp.ID)
		if o.initID != nil && resp.ID == *o.initID {
			o.initID = nil
			var res struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			if resp.Error == nil && json.Unmarshal(resp.Result, &res) == nil {
				o.version = res.ProtocolVersion
			}
		}
	}
	if len(o.pending) == 0 && o.drain != nil {
		close(o.drain)
		o.drain = nil
	}
}

// track records the calls in msgs as pending.
func (o *stdioWriter) track(msgs []jsonrpc.Message) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, m := range msgs {
		req, ok := m.(*jsonrpc.Request)
		switch {
		case !ok:
		case req.ID.IsValid():
			o.pending[req.ID] = true
			if req.Method == "initialize" && o.version == "" {
				id := req.ID
				o.initID = &id
			}
		case req.Method == "notifications/cancelled":
			// A cancelled call may get no answer.
			var p struct {
				RequestID any `json:"requestId"`
			}
			if json.Unmarshal(req.Params, &p) == nil {
				if id, err := jsonrpc.MakeID(p.RequestID); err == nil {
					delete(o.pending, id)
				}
			}
		}
	}
	if len(o.pending) == 0 && o.drain != nil {
		close(o.drain)
		o.drain = nil
	}
}

// drained is closed once no call is pending.
func (o *stdioWriter) drained() <-chan struct{} {
	o.mu.Lock()
	defer o.mu.Unlock()
	ch := make(chan struct{})
	if len(o.pending) == 0 {
		close(ch)
	} else {
		o.drain = ch
	}
	return ch
}

func (o *stdioWriter) Close() error { return nil }

func (o *stdioWriter) negotiated() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.version
}

// lineFilter reads lines, passes the valid messages on to the SDK and
// answers the others.
type lineFilter struct {
	out    *stdioWriter
	pass   *io.PipeWriter
	closed <-chan struct{} // the SDK closed its end
	max    int
}

func (f *lineFilter) run(r io.Reader) {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, tooLong, err := readLine(br, f.max)
		if tooLong {
			f.reply(errorReply(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("Invalid Request: the message is longer than %d bytes", f.max)))
		} else if line = bytes.TrimSpace(line); len(line) > 0 {
			forward, reply := f.vet(line)
			if reply != nil {
				f.reply(reply)
			}
			if forward != nil {
				f.out.track(decodeAll(forward))
				if _, werr := f.pass.Write(append(forward, '\n')); werr != nil {
					return // the session ended
				}
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
				select { // let the calls in flight be answered first
				case <-f.out.drained():
				case <-f.closed:
				case <-time.After(eofGrace):
				}
			}
			f.pass.CloseWithError(err)
			return
		}
	}
}

// readLine reads up to and including the next newline. A line longer than
// max is consumed and reported as tooLong, without its bytes.
func readLine(br *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		frag, err := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(frag) > max+2 { // the message, \r and \n
				line, tooLong = nil, true
			} else {
				line = append(line, frag...)
			}
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, tooLong, err
		}
	}
}

func (f *lineFilter) reply(b []byte) {
	answer := string(b)
	if len(answer) > 300 {
		answer = answer[:300] + "…"
	}
	slog.Warn("mcp: a line was not a JSON-RPC message; answered with an error, the session goes on", "answer", answer)
	f.out.Write(append(b, '\n')) // a broken output ends the session by itself
}

// vet decides what becomes of one line: forward is what the SDK gets (nil:
// nothing), reply the error answer written back (nil: none).
func (f *lineFilter) vet(line []byte) (forward, reply []byte) {
	if depth(line) > maxDepth {
		return nil, errorReply(nil, jsonrpc.CodeParseError, fmt.Sprintf("Parse error: the message nests deeper than %d levels", maxDepth))
	}
	var raw json.RawMessage
	if err := json.Unmarshal(line, &raw); err != nil {
		return nil, errorReply(nil, jsonrpc.CodeParseError, "Parse error: "+err.Error())
	}
	switch line[0] {
	case '[':
		return f.vetBatch(line)
	case '{':
		id, problem := vetMessage(line)
		if problem != "" {
			return nil, errorReply(id, jsonrpc.CodeInvalidRequest, "Invalid Request: "+problem)
		}
		return line, nil
	}
	return nil, errorReply(nil, jsonrpc.CodeInvalidRequest, "Invalid Request: a message is a JSON object, not "+jsonKind(line))
}

// vetBatch checks a JSON array of messages.
func (f *lineFilter) vetBatch(line []byte) (forward, reply []byte) {
	var elems []json.RawMessage
	if err := json.Unmarshal(line, &elems); err != nil {
		return nil, errorReply(nil, jsonrpc.CodeParseError, "Parse error: "+err.Error())
	}
	v := f.out.negotiated()
	switch {
	case len(elems) == 0:
		return nil, errorReply(nil, jsonrpc.CodeInvalidRequest, "Invalid Request: an empty batch")
	case v == "":
		return nil, errorReply(nil, jsonrpc.CodeInvalidRequest, "Invalid Request: a batch before the session is initialized; send initialize on its own line first")
	case v >= "2025-06-18":
		return nil, errorReply(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("Invalid Request: MCP %s has no batches; send each message on its own line", v))
	}
	var good, bad []json.RawMessage
	seen := map[jsonrpc.ID]bool{}
	for _, el := range elems {
		id, problem := vetMessage(el)
		if problem == "" {
			msg, _ := jsonrpc.DecodeMessage(el)
			if req, ok := msg.(*jsonrpc.Request); ok && req.ID.IsValid() {
				if seen[req.ID] {
					problem = fmt.Sprintf("id %s appears twice in the batch", id)
					id = nil
				}
				seen[req.ID] = true
			}
		}
		if problem != "" {
			bad = append(bad, errorReply(id, jsonrpc.CodeInvalidRequest, "Invalid Request: "+problem))
			continue
		}
		good = append(good, el)
	}
	if len(good) > 0 {
		forward, _ = json.Marshal(good)
	}
	if len(bad) > 0 {
		reply, _ = json.Marshal(bad)
	}
	return forward, reply
}

// vetMessage checks one JSON value as a JSON-RPC 2.0 message. It returns
// the problem ("" when there is none) and, for a request, its id to echo.
func vetMessage(raw []byte) (id json.RawMessage, problem string) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, "a message is a JSON object, not " + jsonKind(raw)
	}
	idRaw, hasID := fields["id"]
	if hasID && string(idRaw) == "null" {
		hasID = false
	}
	if hasID && !validID(idRaw) {
		return nil, `"id" must be a string or a number`
	}
	method, isRequest := fields["method"]
	if isRequest && hasID {
		id = idRaw
	}
	var version string
	if v, ok := fields["jsonrpc"]; !ok || json.Unmarshal(v, &version) != nil || version != "2.0" {
		return id, `"jsonrpc" must be "2.0"`
	}
	if isRequest {
		var name string
		if string(method) == "null" || json.Unmarshal(method, &name) != nil {
			return id, `"method" must be a string`
		}
		if p, ok := fields["params"]; ok && p[0] != '{' && p[0] != '[' && string(p) != "null" {
			return id, `"params" must be an object or an array`
		}
	} else {
		_, hasResult := fields["result"]
		e, hasError := fields["error"]
		if !hasID || !hasResult && !hasError {
			return nil, `a message needs a "method" (a request or notification), or an "id" with a "result" or an "error" (a response)`
		}
		var we struct {
			Code    *int64  `json:"code"`
			Message *string `json:"message"`
		}
		if hasError && string(e) != "null" && (json.Unmarshal(e, &we) != nil || we.Code == nil || we.Message == nil) {
			return nil, `"error" must be an object with a numeric "code" and a string "message"`
		}
	}
	if _, err := jsonrpc.DecodeMessage(raw); err != nil {
		return id, "not a JSON-RPC 2.0 request, notification or response"
	}
	return id, ""
}

// decodeAll decodes a message or a batch that passed vet.
func decodeAll(b []byte) []jsonrpc.Message {
	var msgs []jsonrpc.Message
	for _, raw := range splitBatch(b) {
		if m, err := jsonrpc.DecodeMessage(raw); err == nil {
			msgs = append(msgs, m)
		}
	}
	return msgs
}

// splitBatch returns the messages of a batch, or b alone.
func splitBatch(b []byte) []json.RawMessage {
	if len(b) == 0 || b[0] != '[' {
		return []json.RawMessage{b}
	}
	var raws []json.RawMessage // fresh: Unmarshal reuses the elements' memory
	if json.Unmarshal(b, &raws) != nil {
		return nil
	}
	return raws
}

// validID reports whether raw is an id JSON-RPC allows: a string or a number.
func validID(raw json.RawMessage) bool {
	switch raw[0] {
	case '"':
		var s string
		return json.Unmarshal(raw, &s) == nil
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		_, err := strconv.ParseFloat(string(raw), 64)
		return err == nil
	}
	return false
}

// jsonKind names the kind of a valid JSON value.
func jsonKind(raw []byte) string {
	switch raw[0] {
	case '"':
		return "a string"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// depth returns how deep objects and arrays nest in b (strings skipped).
func depth(b []byte) int {
	d, deepest := 0, 0
	inString, escaped := false, false
	for _, c := range b {
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case inString && c == '"':
			inString = false
		case inString:
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			d++
			deepest = max(deepest, d)
		case c == '}' || c == ']':
			d = max(d-1, 0)
		}
	}
	return deepest
}

// errorReply encodes a JSON-RPC error response (id nil: null).
func errorReply(id json.RawMessage, code int, msg string) []byte {
	type rpcError struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   rpcError        `json:"error"`
	}{"2.0", id, rpcError{code, msg}})
	return b
}

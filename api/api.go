// Package api is memos' one table of operations. Each Op has a name, a Go
// input type, a Go output type and one handler that calls core.Engine; the
// HTTP API (api/server), the MCP tools (api/mcpserver) and the OpenAPI
// document (OpenAPI) are all derived from Ops, so a front-end never holds
// engine logic of its own.
//
// A call goes through Service.Call: the request body is decoded strictly
// (unknown fields, trailing data and wrong types are ErrInvalid), the
// namespace is chosen (the request's, else the caller's only namespace,
// else the service's default) and checked against what the caller may
// reach (ErrForbidden otherwise), and the handler runs on an engine handle
// scoped to that namespace under the service's per-call timeout. A caller
// limited to namespaces gets a limited handle (core.Engine.Limit): it reads
// its namespace and default but changes only memories in its namespaces.
package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/memos-go/memos/core"
)

// Op is one operation of the table.
type Op struct {
	// Name is the operation's verb, also its HTTP route: POST /api/mem/<Name>.
	Name string
	// Tool is its MCP tool name.
	Tool string
	// Title is a short human title; Description tells a model when to call it.
	Title       string
	Description string
	// ReadOnly operations change nothing in the store (access statistics
	// aside); Destructive ones remove data for good.
	ReadOnly, Destructive bool
	// Global operations read the whole store beyond any namespace; a caller
	// limited to namespaces may not call them.
	Global bool
	// In and Out are the Go types of the request and of the answer.
	In, Out reflect.Type
	// Renamed maps the old names of request fields that were renamed (old
	// → new). Decode still accepts an old name, for one release, as if the
	// new one had been given; the schemas show only the new names.
	Renamed map[string]string
	// Stream, if set, gives the operation a streaming HTTP form besides
	// the JSON one (see Stream).
	Stream *Stream

	call func(ctx context.Context, e *core.Engine, in any) (any, error)
}

// Stream is the streaming form of an operation whose data is too large for
// one JSON value: an export answers its NDJSON as the HTTP body, an import
// reads the NDJSON of its HTTP body (its other fields from the URL query).
// MCP, and HTTP callers who send JSON, carry the same data inside a JSON
// string instead.
type Stream struct {
	// Write writes the answer to w as NDJSON (nil: the answer is JSON) and
	// returns a summary of what it wrote.
	Write func(ctx context.Context, e *core.Engine, in any, w io.Writer) (any, error)
	// Read runs the operation on the NDJSON data read from r, the other
	// fields from in (nil: the request is JSON).
	Read func(ctx context.Context, e *core.Engine, in any, r io.Reader) (any, error)
}

// Path is the operation's HTTP route.
func (o *Op) Path() string { return "/api/mem/" + o.Name }

// Scope is the namespace part of every request.
type Scope struct {
	Namespace string `json:"namespace,omitempty" jsonschema_description:"Namespace to read and write (default: the server's, e.g. from MEMOS_NAMESPACE). Reads see this namespace plus the shared default one. \"default\" or project:|harness:|user:|agent:|run: followed by a name."`
}

func (s *Scope) scope() *Scope { return s }

type scoped interface{ scope() *Scope }

// op builds a table entry from a typed handler.
func op[I any, O any, PI interface {
	*I
	scoped
}](o Op, fn func(ctx context.Context, e *core.Engine, in *I) (O, error)) *Op {
	o.In, o.Out = reflect.TypeFor[I](), reflect.TypeFor[O]()
	for o.Out.Kind() == reflect.Pointer {
		o.Out = o.Out.Elem()
	}
	o.call = func(ctx context.Context, e *core.Engine, in any) (any, error) {
		return fn(ctx, e, in.(*I))
	}
	return &o
}

// Lookup returns the operation named name (its verb or its tool name).
func Lookup(name string) (*Op, bool) {
	for _, o := range Ops() {
		if o.Name == name || o.Tool == name {
			return o, true
		}
	}
	return nil, false
}

// ErrForbidden: the caller's token does not reach the namespace asked for,
// the operation reads beyond namespaces, or it would change a memory the
// caller may only read. Front-ends answer it with 403. It is core's.
var ErrForbidden = core.ErrForbidden

// KindOf classifies err for front-ends; it is core.KindOf.
func KindOf(err error) core.Kind { return core.KindOf(err) }

// Access is what a caller may reach. Nil Namespaces means every namespace.
type Access struct {
	// Name identifies the caller in logs (a token's name), never the secret.
	Name       string
	Namespaces []string
}

// restricted reports whether a is limited to some namespaces.
func (a *Access) restricted() bool { return a != nil && a.Namespaces != nil }

// Service runs operations on one engine shared by every caller.
type Service struct {
	// Engine is the shared engine; its namespace is the default of calls
	// that name none.
	Engine *core.Engine
	// Timeout bounds each call (0: no bound beyond the caller's context).
	Timeout time.Duration
	// Observe, if set, is told the outcome and duration of every Call
	// (metrics); it must be safe for concurrent use.
	Observe func(ctx context.Context, o *Op, err error, d time.Duration)
}

// Decode reads body as op's input, strictly: unknown fields, trailing
// data, wrong types, malformed JSON and text that is not valid UTF-8 (in
// any field, see core.CheckJSONUTF8) are ErrInvalid. An empty body is {}.
func (o *Op) Decode(body []byte) (any, error) {
	in := reflect.New(o.In).Interface()
	if len(bytes.TrimSpace(body)) == 0 {
		return in, nil
	}
	body, err := o.rename(body)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(in); err != nil {
		return nil, core.Invalidf("%s request: %s", o.Name, jsonError(err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, core.Invalidf("%s request: unexpected data after the JSON object", o.Name)
	}
	if err := core.CheckJSONUTF8(body); err != nil {
		return nil, fmt.Errorf("%s request: %w", o.Name, err)
	}
	return in, nil
}

// rename gives the fields of body that carry an old name (Renamed) their
// new one. A body that is not a JSON object is left to the decoder.
func (o *Op) rename(body []byte) ([]byte, error) {
	if len(o.Renamed) == 0 || !bytes.Contains(body, []byte(`"`)) {
		return body, nil
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(body, &fields) != nil {
		return body, nil
	}
	changed := false
	for old, name := range o.Renamed {
		v, ok := fields[old]
		if !ok {
			continue
		}
		if _, both := fields[name]; both {
			return nil, core.Invalidf("%s request: fields %q and %q are the same (%q is its old name); give %q only", o.Name, name, old, old, name)
		}
		delete(fields, old)
		fields[name] = v
		changed = true
	}
	if !changed {
		return body, nil
	}
	return json.Marshal(fields)
}

// jsonError rewords encoding/json's errors for a caller who sent the body.
func jsonError(err error) string {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te) && te.Field != "":
		// Drop embedded structs (Attrs.significance): callers see flat JSON.
		var path []string
		for _, seg := range strings.Split(te.Field, ".") {
			if seg != "" && (seg[0] < 'A' || seg[0] > 'Z') {
				path = append(path, seg)
			}
		}
		return fmt.Sprintf("field %q: cannot use a JSON %s, want %s", strings.Join(path, "."), te.Value, describe(te.Type))
	case errors.As(err, &te):
		return fmt.Sprintf("cannot use a JSON %s, want %s", te.Value, describe(te.Type))
	case errors.As(err, &se):
		return fmt.Sprintf("malformed JSON at byte %d: %v", se.Offset, se)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "the JSON body ends too early"
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if f, ok := strings.CutPrefix(msg, "unknown field "); ok {
		return "unknown field " + f + " (see /openapi.json or the tool's input schema)"
	}
	return msg
}

func describe(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return t.String()
}

// Call decodes body as op's input and runs op for a caller with access acc
// (nil: unrestricted).
func (s *Service) Call(ctx context.Context, o *Op, body []byte, acc *Access) (out any, err error) {
	if s.Observe != nil {
		start := time.Now()
		defer func() { s.Observe(ctx, o, err, time.Since(start)) }()
	}
	in, err := o.Decode(body)
	if err != nil {
		return nil, err
	}
	return s.Run(ctx, o, in, acc)
}

// Run runs op on an already decoded input (a pointer to a value of op.In).
func (s *Service) Run(ctx context.Context, o *Op, in any, acc *Access) (any, error) {
	return s.run(ctx, o, in, acc, func(ctx context.Context, e *core.Engine) (any, error) { return o.call(ctx, e, in) })
}

// WriteStream runs op's streaming answer (op.Stream.Write) for the decoded
// input in: it writes NDJSON to w and returns the summary of what it wrote.
// Nothing is written when the call fails before its answer is complete,
// unless w fails.
func (s *Service) WriteStream(ctx context.Context, o *Op, in any, acc *Access, w io.Writer) (sum any, err error) {
	if o.Stream == nil || o.Stream.Write == nil {
		return nil, fmt.Errorf("%s answers JSON, not a stream", o.Name)
	}
	if s.Observe != nil {
		start := time.Now()
		defer func() { s.Observe(ctx, o, err, time.Since(start)) }()
	}
	return s.run(ctx, o, in, acc, func(ctx context.Context, e *core.Engine) (any, error) { return o.Stream.Write(ctx, e, in, w) })
}

// ReadStream runs op (op.Stream.Read) on the NDJSON data read from r and the
// other fields of the decoded input in.
func (s *Service) ReadStream(ctx context.Context, o *Op, in any, acc *Access, r io.Reader) (out any, err error) {
	if o.Stream == nil || o.Stream.Read == nil {
		return nil, core.Invalidf("%s takes a JSON request, not a stream", o.Name)
	}
	if s.Observe != nil {
		start := time.Now()
		defer func() { s.Observe(ctx, o, err, time.Since(start)) }()
	}
	return s.run(ctx, o, in, acc, func(ctx context.Context, e *core.Engine) (any, error) { return o.Stream.Read(ctx, e, in, r) })
}

// run checks in's type and the caller's access, then runs fn on the engine
// handle of the call's namespace under the service's timeout.
func (s *Service) run(ctx context.Context, o *Op, in any, acc *Access, fn func(ctx context.Context, e *core.Engine) (any, error)) (any, error) {
	sc, ok := in.(scoped)
	if !ok || reflect.TypeOf(in).Elem() != o.In {
		return nil, fmt.Errorf("%s: input of type %T, want *%s", o.Name, in, o.In)
	}
	eng, err := s.engineFor(o, sc.scope().Namespace, acc)
	if err != nil {
		return nil, err
	}
	if s.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.Timeout)
		defer cancel()
	}
	out, err := fn(ctx, eng)
	if err != nil {
		if acc.restricted() {
			err = conceal(err, eng.Namespace())
		}
		return nil, err
	}
	return out, nil
}

// engineFor picks the namespace of a call and checks the caller may reach it.
func (s *Service) engineFor(o *Op, ns string, acc *Access) (*core.Engine, error) {
	if acc.restricted() && o.Global {
		return nil, fmt.Errorf("%w: %s reads the whole store; this token is limited to namespaces %s", ErrForbidden, o.Name, strings.Join(acc.Namespaces, ", "))
	}
	if ns == "" {
		ns = s.Engine.Namespace()
		if acc.restricted() && len(acc.Namespaces) == 1 {
			ns = acc.Namespaces[0]
		}
	}
	if err := core.ValidateNamespace(ns); err != nil {
		return nil, err
	}
	if acc.restricted() && !slices.Contains(acc.Namespaces, ns) {
		return nil, fmt.Errorf("%w: this token may not use namespace %s (it may use %s)", ErrForbidden, ns, strings.Join(acc.Namespaces, ", "))
	}
	eng, err := s.Engine.In(ns)
	if err != nil || !acc.restricted() {
		return eng, err
	}
	return eng.Limit(acc.Namespaces...)
}

// conceal rewords a not-found error for a caller limited to namespaces so
// that it says nothing about memories outside them: whether an id exists in
// another namespace or not at all reads the same.
func conceal(err error, ns string) error {
	if core.KindOf(err).Name != "not_found" {
		return err
	}
	where := ns
	if ns != core.DefaultNamespace {
		where += " or " + core.DefaultNamespace
	}
	var ce *core.Error
	if errors.As(err, &ce) && ce.ID != 0 {
		return &core.Error{Op: ce.Op, ID: ce.ID, Err: fmt.Errorf("%w: no such memory in namespace %s", core.ErrNotFound, where)}
	}
	return fmt.Errorf("%w: no such memory in namespace %s", core.ErrNotFound, where)
}

// ParseTime reads an RFC3339 time or a YYYY-MM-DD date (midnight UTC) given
// for field; "" is the zero time.
func ParseTime(field, s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Time{}, core.Invalidf("%s %q is not a time: use RFC3339 (2024-05-01T15:04:05Z) or a date (2024-05-01)", field, s)
}

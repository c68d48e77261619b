package api

import (
	"encoding/json"
	"reflect"
	"sync"

	"github.com/invopop/jsonschema"

	"github.com/memos-go/memos/core"
)

// Schema returns the JSON Schema (draft 2020-12, every type inlined) of Go
// type t, generated from its fields and tags.
func Schema(t reflect.Type) *jsonschema.Schema {
	schemaMu.Lock()
	defer schemaMu.Unlock()
	if s, ok := schemas[t]; ok {
		return s
	}
	r := &jsonschema.Reflector{DoNotReference: true, Mapper: mapType}
	s := r.ReflectFromType(t)
	s.Version, s.ID = "", "" // embedded in tool lists and OpenAPI, not a document of its own
	schemas[t] = s
	return s
}

var (
	schemaMu sync.Mutex
	schemas  = map[reflect.Type]*jsonschema.Schema{}
)

// mapType gives the schema of types whose JSON is not their fields.
func mapType(t reflect.Type) *jsonschema.Schema {
	if t == reflect.TypeFor[Duration]() {
		return &jsonschema.Schema{Type: "string", Description: "A duration as the configuration writes it: a number and a unit (h, m, s, ms), e.g. 720h, 1m30s, 250ms."}
	}
	if t == reflect.TypeFor[core.Embedding]() {
		props := jsonschema.NewProperties()
		props.Set("model", &jsonschema.Schema{Type: "string", Description: "The embedding model's id."})
		props.Set("dim", &jsonschema.Schema{Type: "integer", Description: "The vector's dimension (the vector itself is not returned)."})
		return &jsonschema.Schema{Type: "object", Properties: props, Required: []string{"model", "dim"}}
	}
	return nil
}

// InputSchema and OutputSchema are the JSON Schemas of o's request and answer.
func (o *Op) InputSchema() *jsonschema.Schema  { return Schema(o.In) }
func (o *Op) OutputSchema() *jsonschema.Schema { return Schema(o.Out) }

// ErrorBody is what every front-end answers a failed call with.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is an error's kind (a stable machine name such as not_found)
// and a message saying what was wrong and what to do.
type ErrorDetail struct {
	Kind    string `json:"kind" jsonschema:"enum=invalid,enum=not_found,enum=unknown_name,enum=dimension_mismatch,enum=model_mismatch,enum=conflict,enum=closed,enum=unavailable,enum=canceled,enum=deadline_exceeded,enum=internal,enum=unauthorized,enum=forbidden,enum=too_large,enum=method_not_allowed"`
	Message string `json:"message"`
}

// Errorf returns the error body for err.
func Errorf(err error) ErrorBody {
	return ErrorBody{Error: ErrorDetail{Kind: KindOf(err).Name, Message: err.Error()}}
}

// OpenAPI returns the OpenAPI 3.1 document of the HTTP API: one POST route
// per operation of the table, plus the server's own endpoints.
func OpenAPI(version string) ([]byte, error) {
	errResp := map[string]any{
		"description": "An error: its kind (the HTTP status follows from it) and a message.",
		"content":     map[string]any{"application/json": map[string]any{"schema": Schema(reflect.TypeFor[ErrorBody]())}},
	}
	paths := map[string]any{}
	ndjson := map[string]any{"schema": map[string]any{"type": "string", "description": "Newline-delimited JSON: a memos export (header line, memories, edges)."}}
	for _, o := range Ops() {
		request := map[string]any{"application/json": map[string]any{"schema": o.InputSchema()}}
		answer := map[string]any{"application/json": map[string]any{"schema": o.OutputSchema()}}
		post := map[string]any{
			"operationId": o.Name,
			"summary":     o.Title,
			"description": o.Description + "\n\nMCP tool: `" + o.Tool + "`.",
			"tags":        []string{"memories"},
			"requestBody": map[string]any{"required": true, "content": request},
			"responses": map[string]any{
				"200":     map[string]any{"description": o.Title + ": the answer.", "content": answer},
				"default": errResp,
			},
		}
		if o.Stream != nil && o.Stream.Write != nil {
			answer["application/x-ndjson"] = ndjson
			post["description"] = post["description"].(string) + " The answer is NDJSON, written as it is read, unless the request's Accept header asks for application/json."
		}
		if o.Stream != nil && o.Stream.Read != nil {
			request["application/x-ndjson"] = ndjson
			var params []any
			for p := o.InputSchema().Properties.Oldest(); p != nil; p = p.Next() {
				params = append(params, map[string]any{"name": p.Key, "in": "query", "required": false,
					"description": "With an application/x-ndjson body: " + p.Value.Description, "schema": map[string]any{"type": p.Value.Type}})
			}
			post["parameters"] = params
		}
		paths[o.Path()] = map[string]any{"post": post}
	}
	text := func(desc, ctype string) map[string]any {
		return map[string]any{"description": desc, "content": map[string]any{ctype: map[string]any{"schema": map[string]any{"type": "string"}}}}
	}
	plain := func(id, summary string, ok map[string]any) map[string]any {
		return map[string]any{"get": map[string]any{"operationId": id, "summary": summary, "tags": []string{"server"}, "security": []any{},
			"responses": map[string]any{"200": ok, "default": errResp}}}
	}
	paths["/healthz"] = plain("healthz", "The process is up; which memos it is.", map[string]any{"description": `{"status":"ok","version":"<memos version>"}`,
		"content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"type": "object", "properties": map[string]any{
			"status": map[string]any{"type": "string", "const": "ok"}, "version": map[string]any{"type": "string"}}}}}})
	paths["/readyz"] = plain("readyz", "The store is open and answers.", text("ready", "text/plain"))
	paths["/metrics"] = plain("metrics", "Prometheus metrics: requests and latency per operation, store size.", text("Prometheus text format", "text/plain"))
	paths["/openapi.json"] = plain("openapi", "This document.", map[string]any{"description": "OpenAPI 3.1", "content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"type": "object"}}}})
	doc := map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":   "memos",
			"version": version,
			"description": "memos' HTTP API: every operation is POST /api/mem/<operation> with a JSON body; unknown fields are rejected. " +
				"Each request may name a namespace (default: the server's). Errors are {\"error\":{\"kind\",\"message\"}}. " +
				"The same operations are MCP tools at /mcp.",
		},
		"paths": paths,
		"components": map[string]any{"securitySchemes": map[string]any{
			"bearer": map[string]any{"type": "http", "scheme": "bearer", "description": "Required when the server has tokens (always when it listens beyond loopback)."}}},
		"security": []any{map[string]any{"bearer": []string{}}, map[string]any{}},
	}
	return json.MarshalIndent(doc, "", "  ")
}

// Encode renders an operation's answer as JSON, indented, with a final
// newline: the same bytes the CLI prints with --json (a context pack's
// bytes are core.Pack.JSON's, as `memos pack --format json` prints them).
func Encode(out any) ([]byte, error) {
	if j, ok := out.(interface{ JSON() ([]byte, error) }); ok {
		return j.JSON()
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Package mcpserver exposes memos' operation table (package api) as an MCP
// server built with the official Go SDK: one tool per operation, with the
// table's input and output schemas and structured results, plus the
// bootstrap context pack as a prompt and a resource so that a client can
// inject it at the start of a session. The same server runs over stdio
// (`memos mcp`) and over streamable HTTP at /mcp (`memos serve`).
package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memos-go/memos/api"
	"github.com/memos-go/memos/core"
)

// AccessKey is the TokenInfo.Extra key under which an HTTP front-end puts
// the caller's *api.Access.
const AccessKey = "memos.access"

// Instructions tell a client's model how to use the tools.
const Instructions = `memos is your long-term memory. Store what you learn about the user and their work with memory_store as you go (one self-contained statement per memory, significance 1-10), without being asked. ` +
	`Before answering something that may depend on earlier sessions, call memos_context_pack with what you are about to work on and use the cited memories it returns. ` +
	`At the start of a session, read the bootstrap prompt or resource (or call memos_context_pack with bootstrap=true). ` +
	`When something stops being true, use memos_supersede; when the user asks you to forget something, memos_forget. ` +
	`Every tool takes an optional namespace (e.g. project:web, user:alice); reads see that namespace plus the shared default one. `

// New returns an MCP server whose tools run on svc.
func New(svc *api.Service, version string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "memos", Title: "memos memory", Version: version},
		&mcp.ServerOptions{Instructions: Instructions})
	for _, o := range api.Ops() {
		destructive := o.Destructive
		s.AddTool(&mcp.Tool{
			Name:         o.Tool,
			Title:        o.Title,
			Description:  o.Description,
			InputSchema:  o.InputSchema(),
			OutputSchema: o.OutputSchema(),
			Annotations: &mcp.ToolAnnotations{Title: o.Title, ReadOnlyHint: o.ReadOnly, DestructiveHint: &destructive,
				IdempotentHint: o.ReadOnly, OpenWorldHint: new(bool)},
		}, toolHandler(svc, o))
	}
	bootstrap, _ := api.Lookup("context-pack")
	s.AddPrompt(&mcp.Prompt{
		Name:        "bootstrap",
		Title:       "memos: what to remember at session start",
		Description: "The namespace's most significant, most used memories as a cited Markdown context pack, to inject at the start of a session.",
		Arguments: []*mcp.PromptArgument{
			{Name: "namespace", Description: "Namespace to read (default: the server's)."},
			{Name: "budget", Description: "The most tokens the pack may take (default 800)."},
		},
	}, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		in := &api.PackIn{Bootstrap: true}
		in.Namespace = req.Params.Arguments["namespace"]
		if b := req.Params.Arguments["budget"]; b != "" {
			n, err := strconv.Atoi(b)
			if err != nil {
				return nil, core.Invalidf("budget %q is not a whole number", b)
			}
			in.Budget = n
		}
		out, err := svc.Run(ctx, bootstrap, in, access(req.Extra))
		if err != nil {
			return nil, err
		}
		pk := out.(*core.Pack)
		return &mcp.GetPromptResult{
			Description: fmt.Sprintf("memos bootstrap pack for %s: %d memories, %d tokens", pk.Namespace, len(pk.Memories), pk.Tokens),
			Messages:    []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: pk.Markdown()}}},
		}, nil
	})
	s.AddResource(&mcp.Resource{
		URI:         BootstrapURI,
		Name:        "bootstrap",
		Title:       "memos bootstrap context pack",
		Description: "The default namespace's most significant memories as a cited Markdown context pack (800 tokens), for the start of a session.",
		MIMEType:    "text/markdown",
	}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		out, err := svc.Run(ctx, bootstrap, &api.PackIn{Bootstrap: true}, access(req.Extra))
		if err != nil {
			return nil, err
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
			{URI: BootstrapURI, MIMEType: "text/markdown", Text: out.(*core.Pack).Markdown()}}}, nil
	})
	return s
}

// BootstrapURI is the resource holding the bootstrap pack.
const BootstrapURI = "memos://bootstrap"

// access returns the caller's access as the HTTP front-end recorded it
// (nil: unrestricted, as over stdio or without tokens).
func access(extra *mcp.RequestExtra) *api.Access {
	if extra == nil {
		return nil
	}
	return AccessOf(extra.TokenInfo)
}

// AccessOf reads the access recorded in ti (nil when none).
func AccessOf(ti *auth.TokenInfo) *api.Access {
	if ti == nil {
		return nil
	}
	acc, _ := ti.Extra[AccessKey].(*api.Access)
	return acc
}

// toolHandler runs o for a tool call. Errors from the operation are tool
// results with IsError set (kind and message), so that the model sees them
// and can correct its call.
func toolHandler(svc *api.Service, o *api.Op) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		out, err := svc.Call(ctx, o, req.Params.Arguments, access(req.Extra))
		if err != nil {
			b, _ := json.Marshal(api.Errorf(err))
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
		}
		b, err := api.Encode(out)
		if err != nil {
			return nil, err
		}
		text := string(b)
		if md, ok := out.(interface{ Markdown() string }); ok {
			text = md.Markdown() // what a model injects into its context
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: json.RawMessage(b)}, nil
	}
}

package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/memos-go/memos/api"
	"github.com/memos-go/memos/api/mcpserver"
	"github.com/memos-go/memos/api/server"
	"github.com/memos-go/memos/cmd/memos/config"
	"github.com/memos-go/memos/core"
)

// This file holds the server commands: memos serve (HTTP API and MCP over
// streamable HTTP) and memos mcp (MCP over stdio). Both run the operation
// table of package api on one engine; nothing here calls the engine itself.

// serverOptions maps the server section of the configuration.
func serverOptions(cfg *config.Config) server.Options {
	return server.Options{
		Addr:            cfg.Server.Addr,
		Tokens:          cfg.Server.Tokens,
		MaxBody:         cfg.Server.MaxBody,
		Timeout:         cfg.Server.Timeout,
		ShutdownTimeout: cfg.Server.ShutdownTimeout,
		CORSOrigins:     cfg.Server.CORSOrigins,
		NoConsole:       !cfg.Server.Console,
		StorePath:       storePath(cfg),
		Version:         version(),
	}
}

// storePath is the configured backend's path setting ("" when it has none).
func storePath(cfg *config.Config) string {
	for _, v := range cfg.Values {
		if p, ok := v.Value.(string); ok && v.Key == "backends."+cfg.Backend+".path" {
			return p
		}
	}
	return ""
}

func (a *app) serveCmd() *cobra.Command {
	var addr string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the HTTP API and MCP (streamable HTTP at /mcp)",
		Long: `serve opens the store once and answers, until SIGINT or SIGTERM:

  POST /api/mem/<operation>   the HTTP API, JSON in and out (see /openapi.json)
  /mcp                        MCP over streamable HTTP: the same operations as tools
  /console/                   the web console: browse, search, explain, review
  GET  /openapi.json          the OpenAPI 3.1 document of every route
  GET  /healthz, /readyz      liveness and readiness
  GET  /metrics               Prometheus metrics

It listens on 127.0.0.1:7077 unless server.addr or --addr says otherwise; any
address that is not loopback requires a token (server.tokens or MEMOS_TOKEN),
sent as "Authorization: Bearer <token>". On SIGINT or SIGTERM it stops
accepting, lets in-flight requests finish (server.shutdown_timeout) and closes
the store.`,
		Example: `  memos serve
  curl -s localhost:7077/api/mem/context-pack -d '{"query":"where does alice live","budget":400}'
  MEMOS_TOKEN=$(openssl rand -hex 32) memos serve --addr 0.0.0.0:7077`,
		Args: nargs(0, 0, "no arguments"),
		RunE: a.runE(func(cmd *cobra.Command, _ []string) error {
			cfg, err := a.loadConfig(cmd, "")
			if err != nil {
				return err
			}
			opts := serverOptions(cfg)
			if cmd.Flags().Changed("addr") {
				opts.Addr = addr
			}
			ctx := cmd.Context()
			eng, err := a.open(ctx, cfg)
			if err != nil {
				return err
			}
			srv, err := server.New(eng, opts)
			if err != nil {
				return errors.Join(err, eng.Close())
			}
			ln, err := srv.Listen()
			if err != nil {
				return errors.Join(err, eng.Close())
			}
			slog.Info("memos serve: listening", "url", "http://"+ln.Addr().String(), "namespace", eng.Namespace(),
				"store", storePath(cfg), "tokens", len(opts.Tokens), "api", "/api/mem/", "mcp", "/mcp", "console", "/console/", "openapi", "/openapi.json")
			// consolidate.interval: dream on a schedule, stopped before the store closes.
			dctx, stopDream := context.WithCancel(ctx)
			dreamed := make(chan struct{})
			go func() {
				defer close(dreamed)
				eng.ConsolidateEvery(dctx, cfg.Consolidate.Interval, core.ConsolidateRequest{Pages: true}, func(rep *core.ConsolidateReport, err error) {
					if err != nil {
						slog.Warn("memos serve: scheduled dream failed; the next one retries", "err", err)
						return
					}
					slog.Info("memos serve: dreamed", "merged", len(rep.Merges), "archived", len(rep.Archived), "pages", len(rep.Pages), "took", rep.Took)
				})
			}()
			err = srv.Serve(ctx, ln)
			stopDream()
			<-dreamed
			if cerr := eng.Close(); cerr != nil {
				err = errors.Join(err, fmt.Errorf("close store: %w", cerr))
			}
			if err == nil {
				slog.Info("memos serve: stopped; store closed")
			}
			return err
		}),
	}
	cmd.Flags().StringVar(&addr, "addr", "", "listen address (default server.addr, 127.0.0.1:7077)")
	return cmd
}

func (a *app) mcpCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "mcp",
		Short: "Speak MCP over standard input and output (for an agent's MCP config)",
		Long: `mcp runs memos as an MCP server on standard input and output, the way MCP
clients (Claude Desktop, Claude Code, Cursor, agent SDKs) start local servers:
every operation is a tool (memory_store, memos_context_pack, memos_search, ...),
and the bootstrap context pack is a prompt and the resource memos://bootstrap.
Logs go to standard error. It stops when the client closes the connection.
A line that is not a JSON-RPC message is answered with a JSON-RPC error
(-32700 parse error, -32600 invalid request) and the session goes on.`,
		Example: `  memos mcp
  MEMOS_NAMESPACE=project:web memos mcp`,
		Args: nargs(0, 0, "no arguments"),
		RunE: a.runE(func(cmd *cobra.Command, _ []string) error {
			return a.withEngine(cmd, func(ctx context.Context, eng *core.Engine, cfg *config.Config) error {
				timeout := cfg.Server.Timeout
				if timeout == 0 {
					timeout = server.DefaultTimeout
				}
				s := mcpserver.New(&api.Service{Engine: eng, Timeout: timeout}, version())
				err := s.Run(ctx, mcpserver.Stdio(a.stdin, a.stdout))
				if ctx.Err() != nil || errors.Is(err, io.EOF) {
					return nil // the client went away or we were told to stop
				}
				return err
			})
		}),
	}
}

// Command memos is the memos command line: a memory layer for AI agents.
// Run `memos quickstart` for a tour and `memos --help` for the commands.
//
// This file only picks the backends and embedders compiled in; the command
// tree lives in package cli, so a team can build its own memos with the same
// imports and one more.
package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/memos-go/memos/cmd/memos/cli"
	"github.com/memos-go/memos/plugins" // also registers the "plugin" embedder

	_ "github.com/memos-go/memos/backends/bolt"
	_ "github.com/memos-go/memos/backends/sqlite"
	_ "github.com/memos-go/memos/embedders/hash"
	_ "github.com/memos-go/memos/embedders/ollama"
	_ "github.com/memos-go/memos/embedders/openai"
	_ "github.com/memos-go/memos/embedders/wordvec"
)

func main() {
	slog.SetDefault(cli.Logger(os.Stderr, os.Environ()))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// Plugins ignore SIGINT so that memos decides when they end: on a signal,
	// end them at once (the cancelled command exits with 130), and on the way
	// out end any that a command left running.
	kill := context.AfterFunc(ctx, plugins.KillAll)
	code := cli.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	kill()
	stop()
	plugins.KillAll()
	os.Exit(code)
}

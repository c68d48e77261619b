// Command memos is the memos command line: a memory layer for AI agents.
// Run `memos quickstart` for a tour and `memos --help` for the commands.
//
// This file only picks the backends and embedders compiled in; the command
// tree lives in package cli, so a team can build its own memos with the same
// imports and one more.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/memos-go/memos/cmd/memos/cli"
	"github.com/memos-go/memos/plugins" // also registers the "plugin" embedder

	_ "github.com/memos-go/memos/backends/bolt"
	_ "github.com/memos-go/memos/backends/postgres"
	_ "github.com/memos-go/memos/backends/sqlite"
	_ "github.com/memos-go/memos/embedders/hash"
	_ "github.com/memos-go/memos/embedders/ollama"
	_ "github.com/memos-go/memos/embedders/openai"
	_ "github.com/memos-go/memos/embedders/wordvec"
)

// shutdownGrace bounds the shutdown after SIGINT or SIGTERM. The command is
// cancelled and the plugins ended at once; if memos has not exited
// shutdownGrace later (something ignored the cancellation), or when a second
// signal arrives, it exits right away with 130. Stores stay consistent:
// every write is one transaction, so this is no worse than a crash, and on
// Linux the kernel ends any plugin with memos.
const shutdownGrace = 2 * time.Second

func main() {
	slog.SetDefault(cli.Logger(os.Stderr, os.Environ()))
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		// Plugins ignore SIGINT so that memos decides when they end: on a
		// signal, end them at once (the cancelled command exits with 130).
		cancel()
		go plugins.KillAll()
		timer := time.NewTimer(shutdownGrace)
		select {
		case <-sigs:
			fmt.Fprintln(os.Stderr, "memos: second signal: exiting now")
		case <-timer.C:
			fmt.Fprintf(os.Stderr, "memos: shutdown did not finish within %v of the signal; exiting now\n", shutdownGrace)
		}
		os.Exit(130)
	}()
	code := cli.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	// End any plugin a command left running (bounded: see plugins.Embedder.Close).
	plugins.KillAll()
	os.Exit(code)
}

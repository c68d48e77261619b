// Command testplugin is the plugin the plugins tests start. Its behaviour is
// chosen by MEMOS_TESTPLUGIN_MODE:
//
//	good         the test embedder, 32 dimensions, max batch 4
//	hash         the built-in hash embedder (embedders/hash), 256 dimensions
//	const        256 dimensions, no batch limit, every text gets the same
//	             vector: measures the protocol alone
//	crash        like good, but exits during its Nth Embed call
//	             (MEMOS_TESTPLUGIN_CRASH_AT, default 1) unless the marker
//	             file "crashed" exists in MEMOS_TESTPLUGIN_STATE (it creates
//	             it first), so the restarted process does not crash
//	crashalways  exits during every Embed call
//	hang         Embed never returns and ignores its context
//	freeze       Embed stops the whole process (SIGSTOP), as a debugger or
//	             a suspended machine would, and again whenever it is
//	             continued (the kernel sends SIGCONT to an orphaned process
//	             group with stopped members), so it never answers
//	wait         Embed logs "embed started", waits for its context to end,
//	             logs "embed cancelled" and returns the context's error
//	errors       Embed fails according to the first text: "invalid",
//	             "unavailable", "panic"; otherwise embeds
//	v2           serves only protocol version 2
//	junk         prints a line that is not a handshake and exits
//
// MEMOS_TESTPLUGIN_MAXBATCH overrides the max batch (0: no limit). If
// MEMOS_TESTPLUGIN_PIDFILE is set, the process writes its pid there.
//
// MEMOS_TESTPLUGIN_KIND=reranker serves the test reranker (testrerank)
// instead, with the modes good, crash, crashalways, hang, freeze, wait and
// errors acting on Rerank (errors: by the query's first word), and "wrong" answering
// one score too few; KIND=both serves the embedder and the reranker.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/hashicorp/go-plugin"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/embedders/hash"
	"github.com/memos-go/memos/plugins/internal/shim"
	"github.com/memos-go/memos/plugins/internal/testembed"
	"github.com/memos-go/memos/plugins/internal/testrerank"
	"github.com/memos-go/memos/plugins/sdk"
)

type modal struct {
	testembed.Embedder
	mode    string
	calls   *atomic.Int64
	crashAt int64
}

func (m modal) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	key := ""
	if len(texts) > 0 {
		key = texts[0]
	}
	if done, err := misbehave(ctx, m.mode, "embed", len(texts), key, m.calls, m.crashAt); done {
		return nil, err
	}
	return m.Embedder.Embed(ctx, texts)
}

// misbehave does what mode asks of a call: exit, hang, freeze, wait for
// the context, or fail according to key. It returns done when the call
// should return err instead of answering.
func misbehave(ctx context.Context, mode, op string, n int, key string, calls *atomic.Int64, crashAt int64) (done bool, err error) {
	switch mode {
	case "crash":
		marker := filepath.Join(os.Getenv("MEMOS_TESTPLUGIN_STATE"), "crashed")
		if _, err := os.Stat(marker); err != nil && calls.Add(1) == crashAt {
			_ = os.WriteFile(marker, nil, 0o644)
			os.Exit(3)
		}
	case "crashalways":
		os.Exit(3)
	case "hang":
		select {}
	case "freeze":
		for {
			_ = syscall.Kill(os.Getpid(), syscall.SIGSTOP)
		}
	case "wait":
		slog.Info(op+" started", "texts", n)
		fmt.Fprintln(os.Stderr, "a plain line on stderr")
		<-ctx.Done()
		slog.Info(op+" cancelled", "error", ctx.Err().Error())
		return true, ctx.Err()
	case "errors":
		switch key {
		case "invalid":
			return true, driver.Invalidf("text %q is not welcome here", key)
		case "unavailable":
			return true, fmt.Errorf("%w: the model server is down", driver.ErrUnavailable)
		case "panic":
			panic("testplugin: asked to panic")
		}
	}
	return false, nil
}

// reranker is the test reranker with the behaviour of a mode.
type reranker struct {
	testrerank.Reranker
	mode    string
	calls   *atomic.Int64
	crashAt int64
}

func (r reranker) Rerank(ctx context.Context, query string, texts []string) ([]float64, error) {
	key, _, _ := strings.Cut(query, " ")
	if done, err := misbehave(ctx, r.mode, "rerank", len(texts), key, r.calls, r.crashAt); done {
		return nil, err
	}
	scores, err := r.Reranker.Rerank(ctx, query, texts)
	if r.mode == "wrong" && len(scores) > 0 {
		scores = scores[1:]
	}
	return scores, err
}

func main() {
	mode := os.Getenv("MEMOS_TESTPLUGIN_MODE")
	if f := os.Getenv("MEMOS_TESTPLUGIN_PIDFILE"); f != "" {
		_ = os.WriteFile(f, []byte(strconv.Itoa(os.Getpid())), 0o644)
	}
	maxBatch := 4
	if s := os.Getenv("MEMOS_TESTPLUGIN_MAXBATCH"); s != "" {
		maxBatch, _ = strconv.Atoi(s)
	}
	crashAt := int64(1)
	if s := os.Getenv("MEMOS_TESTPLUGIN_CRASH_AT"); s != "" {
		crashAt, _ = strconv.ParseInt(s, 10, 64)
	}
	e := modal{Embedder: testembed.Embedder{Dim: 32, MaxBatch: maxBatch}, mode: mode, calls: new(atomic.Int64), crashAt: crashAt}
	switch os.Getenv("MEMOS_TESTPLUGIN_KIND") {
	case "reranker":
		sdk.Logger().Info("test reranker ready", "mode", mode)
		sdk.ServeReranker(reranker{mode: mode, calls: new(atomic.Int64), crashAt: crashAt})
		return
	case "both":
		sdk.ServeBoth(e, reranker{mode: mode, calls: new(atomic.Int64), crashAt: crashAt})
		return
	}
	switch mode {
	case "junk":
		fmt.Println("hello, I am not a plugin")
		os.Exit(1)
	case "hash":
		h, err := hash.New(hash.Config{})
		if err != nil {
			sdk.Logger().Error("hash", "error", err)
			os.Exit(1)
		}
		sdk.Serve(h)
		return
	case "const":
		sdk.Serve(constant{})
		return
	case "v2":
		plugin.Serve(&plugin.ServeConfig{
			HandshakeConfig:  shim.Handshake,
			VersionedPlugins: map[int]plugin.PluginSet{2: shim.Plugins(e, nil)[shim.ProtocolVersion]},
			GRPCServer:       plugin.DefaultGRPCServer,
		})
		return
	}
	sdk.Logger().Info("test plugin ready", "mode", mode)
	sdk.Serve(e)
}

// constant embeds every text as the same precomputed vector.
type constant struct{}

var unit = func() []float32 {
	v := make([]float32, 256)
	for i := range v {
		v[i] = 1.0 / 16 // 256 components of 1/16: unit length
	}
	return v
}()

func (constant) Info(context.Context) (driver.ModelInfo, error) {
	return driver.ModelInfo{ID: "const-256", Dim: 256, Normalized: true}, nil
}

func (constant) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = unit
	}
	return out, nil
}

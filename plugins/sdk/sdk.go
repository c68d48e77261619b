// Package sdk is what a plugin author imports: implement Embedder (the same
// two methods as driver.Embedder) and call Serve from main, or implement
// Reranker (one method, driver.Reranker) and call ServeReranker.
//
//	func main() { sdk.Serve(myEmbedder{}) }
//	func main() { sdk.ServeReranker(myReranker{}) }
//
// Build the program and point memos at the binary:
//
//	embedder:
//	  name: plugin
//	  plugin:
//	    path: ./my-embedder
//	    checksum: sha256:…   # optional; sha256sum ./my-embedder
//
// The plugin speaks memos' embedder protocol over go-plugin's gRPC transport
// with automatic mutual TLS; the author never sees the generated code. The
// host splits batches larger than Info().MaxBatch, so Embed never receives
// more; the context passed to Embed is cancelled when the host's caller
// gives up, so long calls should watch it. Return errors wrapping the core
// sentinels (driver.ErrInvalid for rejected input, driver.ErrUnavailable when a
// server you depend on is down): the host gets the same sentinel back.
//
// Log with Logger() (or slog's default logger, which Serve sets to it):
// lines go to stderr in the format the host parses, so they appear in memos'
// log with their level and attributes. Anything else printed to stderr is
// logged by the host at debug level; stdout is reserved for the handshake.
//
// A reranker plugin is configured as `reranker: {name: plugin, plugin:
// {path: ./my-reranker}}`; whatever it does wrong (an error, a hang, a
// crash, the wrong number of scores), searches keep the fused order.
//
// Test a plugin without building it with plugins/sdk/sdktest.
package sdk

import (
	"io"
	"log/slog"
	"os"
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/plugins/internal/shim"
)

// Embedder is the interface a plugin implements; it is driver.Embedder, whose
// doc states the contract (deterministic, safe for concurrent use, empty
// strings embed, Info never changes).
type Embedder = driver.Embedder

// ModelInfo describes the model; it is driver.ModelInfo.
type ModelInfo = driver.ModelInfo

// Reranker is the interface a reranker plugin implements; it is
// driver.Reranker, whose doc states the contract (one score per text in
// order, higher is more relevant, safe for concurrent use).
type Reranker = driver.Reranker

// Serve serves e as a memos embedder plugin until the host stops it. It
// must be called from main, and only in a process the host started: run by
// hand, the program prints a message saying it is a plugin and exits 1.
func Serve(e Embedder) { serve(e, nil) }

// ServeReranker serves r as a memos reranker plugin until the host stops
// it, as Serve does for an embedder. The host sends at most
// search.rerank_top texts per call and cancels the context when the
// search's rerank_timeout passes.
func ServeReranker(r Reranker) { serve(nil, r) }

// ServeBoth serves e and r from one process, for a model server that does
// both; memos then starts one process per configured use.
func ServeBoth(e Embedder, r Reranker) { serve(e, r) }

func serve(e Embedder, r Reranker) {
	slog.SetDefault(Logger())
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig:  shim.Handshake,
		VersionedPlugins: shim.Plugins(e, r),
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			return grpc.NewServer(append(opts, grpc.MaxRecvMsgSize(maxMessage))...)
		},
		Logger: hclog.New(&hclog.LoggerOptions{Output: os.Stderr, JSONFormat: true, Level: hclog.Info}),
	})
}

// maxMessage bounds a request the plugin accepts (gRPC's default is 4 MB).
const maxMessage = 256 << 20

var (
	loggerOnce sync.Once
	logger     *slog.Logger
)

// Logger returns a logger that writes JSON lines to stderr in the shape the
// host parses (hclog's "@level", "@message", "@timestamp"), at Info level
// and above.
func Logger() *slog.Logger {
	loggerOnce.Do(func() {
		logger = slog.New(NewLogHandler(os.Stderr, slog.LevelInfo))
	})
	return logger
}

// NewLogHandler returns a slog handler writing to w in the host's format,
// for authors who want another level or destination.
func NewLogHandler(w io.Writer, level slog.Leveler) slog.Handler {
	return slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level, ReplaceAttr: hostFormat})
}

// hostFormat renames slog's built-in keys to hclog's.
func hostFormat(groups []string, a slog.Attr) slog.Attr {
	if len(groups) > 0 {
		return a
	}
	switch a.Key {
	case slog.TimeKey:
		return slog.String("@timestamp", a.Value.Time().Format("2006-01-02T15:04:05.000000Z07:00"))
	case slog.LevelKey:
		return slog.String("@level", levelName(a.Value.Any()))
	case slog.MessageKey:
		return slog.String("@message", a.Value.String())
	}
	return a
}

func levelName(v any) string {
	l, _ := v.(slog.Level)
	switch {
	case l < slog.LevelDebug:
		return "trace"
	case l < slog.LevelInfo:
		return "debug"
	case l < slog.LevelWarn:
		return "info"
	case l < slog.LevelError:
		return "warn"
	default:
		return "error"
	}
}

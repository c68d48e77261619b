package plugins

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/plugins/internal/shim"
)

// Name is the name the loader registers under, as an embedder and as a
// reranker: config `embedder: {name: plugin, plugin: {path: ..., checksum:
// ...}}`, `reranker: {name: plugin, plugin: {path: ...}}`.
const Name = "plugin"

// ProtocolVersion is the plugin protocol version this build of
// memos speaks. A plugin built against another version is refused at the
// handshake with an error that says so.
const ProtocolVersion = shim.ProtocolVersion

// Defaults for Config's zero fields.
const (
	DefaultStartTimeout = 30 * time.Second
	DefaultCallTimeout  = 2 * time.Minute
)

// Config says which plugin binary to run and how. The zero value of every
// field but Path is usable.
type Config struct {
	// Path is the plugin executable. A bare name (no slash) is looked up in
	// PATH, so built-in provider binaries such as memos-embed-ollama work
	// once installed.
	Path string `koanf:"path"`
	// Checksum, if set, is "sha256:<64 hex digits>"; the loader refuses to
	// start a binary whose SHA-256 differs (get it with `sha256sum`).
	Checksum string `koanf:"checksum"`
	// Args are passed to the plugin on its command line.
	Args []string `koanf:"args"`
	// Env adds variables to the plugin's environment, which otherwise is
	// memos' own.
	Env map[string]string `koanf:"env"`
	// StartTimeout bounds the start and handshake (default 30s).
	StartTimeout time.Duration `koanf:"start_timeout"`
	// CallTimeout bounds each call to the plugin (default 2m); a call that
	// takes longer fails with an error naming the plugin.
	CallTimeout time.Duration `koanf:"call_timeout"`
	// Logger receives go-plugin's and the plugin's log lines (the plugin's
	// stderr), each with a "plugin" attribute. Nil means slog.Default().
	Logger *slog.Logger `koanf:"-"`
}

func init() {
	driver.RegisterEmbedder(Name, driver.NewEmbedderDriver("plugin embedder", Open))
}

// Embedder runs an embedder plugin out of process and is itself a
// driver.Embedder. It is safe for concurrent use.
//
// Embed splits batches larger than the plugin's MaxBatch, sends the caller's
// context with every call (cancelling it cancels the plugin's work), bounds
// each call by CallTimeout, and checks every answer's shape. When the plugin
// process dies during a call, Embed starts a new process and retries the
// call once. Close (or KillAll) ends the process.
type Embedder struct {
	h    *host
	info driver.ModelInfo // from the first start; a plugin must not change it
}

var (
	_ driver.Embedder = (*Embedder)(nil)
	_ io.Closer       = (*Embedder)(nil)
)

// maxChunk is the batch size the host sends when the plugin declares no
// max batch, so that one message stays reasonably small.
const maxChunk = 256

// ParseChecksum parses "sha256:<64 hex digits>" into the digest bytes.
func ParseChecksum(s string) ([]byte, error) {
	algo, hexsum, ok := strings.Cut(s, ":")
	if !ok || algo != "sha256" {
		return nil, fmt.Errorf("%w: checksum %q: want \"sha256:<64 hex digits>\" (the output of sha256sum)", driver.ErrInvalid, s)
	}
	sum, err := hex.DecodeString(hexsum)
	if err != nil || len(sum) != sha256.Size {
		return nil, fmt.Errorf("%w: checksum %q: after \"sha256:\" want 64 hex digits (the output of sha256sum)", driver.ErrInvalid, s)
	}
	return sum, nil
}

// FileChecksum returns the checksum of the file at path in the form Config
// expects ("sha256:<hex>").
func FileChecksum(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// Open starts the embedder plugin cfg.Path, completes the handshake and
// asks for its model info. Errors wrap driver.ErrInvalid for configuration
// problems (no such file, bad or mismatched checksum, wrong protocol
// version, a plugin that serves no embedder, invalid model info) and
// driver.ErrUnavailable when the process fails to start.
func Open(ctx context.Context, cfg Config) (*Embedder, error) {
	e := &Embedder{}
	// ready runs after every start: the first records the model info, a
	// restarted process must report the same.
	ready := func(ctx context.Context, p *proc) error {
		mi, err := p.rpc.(*shim.Client).Info(ctx)
		switch {
		case err != nil:
			return err
		case e.info == driver.ModelInfo{}:
			if err := validInfo(mi); err != nil {
				return err
			}
			e.info = mi
		case mi != e.info:
			return fmt.Errorf("it reports model %+v after a restart, %+v before", mi, e.info)
		}
		return nil
	}
	h, err := openHost(ctx, cfg, KindEmbedder, ready)
	if err != nil {
		return nil, err
	}
	e.h = h
	h.log.Debug("plugin started", "model", e.info.ID, "dim", e.info.Dim, "max_batch", e.info.MaxBatch)
	return e, nil
}

func validInfo(mi driver.ModelInfo) error {
	switch {
	case mi.ID == "":
		return fmt.Errorf("%w: the plugin reports an empty model id", driver.ErrInvalid)
	case mi.Dim <= 0:
		return fmt.Errorf("%w: the plugin reports dimension %d", driver.ErrInvalid, mi.Dim)
	case mi.MaxBatch < 0:
		return fmt.Errorf("%w: the plugin reports max batch %d", driver.ErrInvalid, mi.MaxBatch)
	}
	return nil
}

// Info asks the plugin for its model info and checks that it has not
// changed since the plugin started.
func (e *Embedder) Info(ctx context.Context) (driver.ModelInfo, error) {
	var mi driver.ModelInfo
	err := e.h.call(ctx, "info", func(ctx context.Context, p *proc) (err error) {
		mi, err = p.rpc.(*shim.Client).Info(ctx)
		return err
	})
	if err != nil {
		return driver.ModelInfo{}, err
	}
	if mi != e.info {
		return driver.ModelInfo{}, fmt.Errorf("plugin %s changed its model info from %+v to %+v; an embedder's info must not change while it runs",
			e.h.name, e.info, mi)
	}
	return mi, nil
}

// Embed implements driver.Embedder. It accepts batches of any size.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("plugin %s: embed: %w", e.h.name, err)
	}
	if _, err := e.h.current(); err != nil {
		return nil, err
	}
	out := make([][]float32, 0, len(texts))
	step := e.info.MaxBatch
	if step <= 0 {
		step = maxChunk
	}
	for start := 0; start < len(texts); start += step {
		chunk := texts[start:min(start+step, len(texts))]
		var vs [][]float32
		err := e.h.call(ctx, "embed", func(ctx context.Context, p *proc) (err error) {
			vs, err = p.rpc.(*shim.Client).Embed(ctx, chunk)
			return err
		})
		if err != nil {
			return nil, err
		}
		if len(vs) != len(chunk) {
			return nil, fmt.Errorf("plugin %s returned %d vectors for %d texts", e.h.name, len(vs), len(chunk))
		}
		for i, v := range vs {
			if len(v) != e.info.Dim {
				return nil, fmt.Errorf("%w: plugin %s returned a vector of %d dimensions for text %d, but its model %s has %d",
					driver.ErrDimensionMismatch, e.h.name, len(v), start+i, e.info.ID, e.info.Dim)
			}
		}
		out = append(out, vs...)
	}
	return out, nil
}

// Close ends the plugin process, within about a second even if the plugin
// is frozen: a plugin that does not shut down cleanly within a second is
// killed (SIGKILL). Calls in progress fail; later calls return
// driver.ErrClosed. Close may be called more than once and concurrently;
// every call returns once the process has ended, with the same error.
func (e *Embedder) Close() error { return e.h.Close() }

package plugins

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health/grpc_health_v1"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/plugins/internal/shim"
)

// Name is the embedder name the loader registers under: config
// `embedder: {name: plugin, plugin: {path: ..., checksum: ...}}`.
const Name = "plugin"

// ProtocolVersion is the embedder plugin protocol version this build of
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
	cfg      Config
	name     string // base name of the binary, for messages and logs
	path     string
	checksum []byte
	log      *slog.Logger
	info     driver.ModelInfo // from the first start; a plugin must not change it

	mu     sync.Mutex
	cur    *proc
	closed bool

	// closing is cancelled when Close starts, so that a restart in progress
	// (which holds mu) gives up instead of delaying Close.
	closing     context.Context
	stopClosing context.CancelFunc
	closeOnce   sync.Once
	closeErr    error
}

var (
	_ driver.Embedder = (*Embedder)(nil)
	_ io.Closer       = (*Embedder)(nil)
)

// proc is one plugin process and its gRPC client.
type proc struct {
	client *plugin.Client
	cmd    *exec.Cmd // started by client; its Process is what stop kills
	rpc    *shim.Client

	stopOnce sync.Once
	stopErr  error
}

// Bounds on ending a plugin process. go-plugin's Client.Kill first asks the
// plugin to shut down over gRPC and waits for the answer without a deadline,
// so a plugin that is frozen (SIGSTOP, a debugger, a swapped-out machine)
// would hang its host; stop therefore waits at most closeGrace for a clean
// exit, then sends SIGKILL (which ends a stopped process too) and waits at
// most reapWait for the process to be reaped.
const (
	closeGrace = time.Second
	reapWait   = 5 * time.Second
)

// pingTimeout bounds the health check that tells a dead plugin from one
// that answered a call with an error.
const pingTimeout = 5 * time.Second

// stop ends the process: cleanly if it answers within closeGrace, else by
// SIGKILL. It returns within closeGrace+reapWait whatever the plugin does.
// Concurrent and later calls wait for the first and return its error.
func (p *proc) stop(log *slog.Logger) error {
	p.stopOnce.Do(func() { p.stopErr = p.end(log) })
	return p.stopErr
}

func (p *proc) end(log *slog.Logger) error {
	done := make(chan struct{})
	go func() {
		p.client.Kill()
		close(done)
	}()
	grace := time.NewTimer(closeGrace)
	defer grace.Stop()
	select {
	case <-done:
		return nil
	case <-grace.C:
	}
	pid := p.cmd.Process.Pid
	log.Warn("plugin did not shut down in time; killing it", "pid", pid, "grace", closeGrace)
	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("kill process %d: %w", pid, err)
	}
	reap := time.NewTimer(reapWait)
	defer reap.Stop()
	select {
	case <-done:
		return nil
	case <-reap.C:
		return fmt.Errorf("process %d was sent SIGKILL but did not end within %v", pid, reapWait)
	}
}

// live holds every open Embedder, for KillAll.
var live = struct {
	sync.Mutex
	m map[*Embedder]struct{}
}{m: make(map[*Embedder]struct{})}

// KillAll closes every open plugin Embedder and so ends their processes.
// Programs call it on exit and on interrupt (a plugin ignores SIGINT so that
// Ctrl-C in a terminal leaves the host in charge of its shutdown). It may be
// called many times. On Linux a plugin also gets SIGKILL when the host dies
// without cleaning up, so no plugin outlives memos.
//
// (go-plugin's own CleanupClients is not used: it may run only once per
// process, and its list of clients only grows, by one per restart.)
func KillAll() {
	live.Lock()
	es := slices.Collect(maps.Keys(live.m))
	live.Unlock()
	var wg sync.WaitGroup
	for _, e := range es {
		wg.Go(func() { _ = e.Close() })
	}
	wg.Wait()
}

// maxMessage bounds one gRPC message. gRPC's default (4 MB) is less than
// a few hundred large vectors; chunking (maxChunk) keeps messages well below.
const maxMessage = 256 << 20

// window is the HTTP/2 flow-control window for answers from the plugin.
const window = 16 << 20

// maxChunk is the batch size the host sends when the plugin declares no
// max batch, so that one message stays reasonably small.
const maxChunk = 256

// errCallTimeout is the cancellation cause of a call that hit CallTimeout.
var errCallTimeout = errors.New("plugin call timeout")

// Open starts the plugin cfg.Path, completes the handshake and asks for its
// model info. Errors wrap driver.ErrInvalid for configuration problems (no
// such file, bad or mismatched checksum, wrong protocol version, invalid
// model info) and driver.ErrUnavailable when the process fails to start.
func Open(ctx context.Context, cfg Config) (*Embedder, error) {
	if cfg.Path == "" {
		return nil, fmt.Errorf("%w: plugin: path is empty; set embedder.plugin.path to the plugin binary", driver.ErrInvalid)
	}
	e := &Embedder{cfg: cfg, name: filepath.Base(cfg.Path), log: cfg.Logger}
	if e.log == nil {
		e.log = slog.Default()
	}
	e.log = e.log.With("plugin", e.name)
	if e.cfg.StartTimeout <= 0 {
		e.cfg.StartTimeout = DefaultStartTimeout
	}
	if e.cfg.CallTimeout <= 0 {
		e.cfg.CallTimeout = DefaultCallTimeout
	}
	path, err := resolve(cfg.Path)
	if err != nil {
		return nil, err
	}
	e.path = path
	if cfg.Checksum != "" {
		if e.checksum, err = ParseChecksum(cfg.Checksum); err != nil {
			return nil, fmt.Errorf("plugin %s: %w", e.name, err)
		}
	}
	p, err := e.start(ctx)
	if err != nil {
		return nil, err
	}
	mi, err := e.infoOf(ctx, p)
	if err == nil {
		err = validInfo(mi)
	}
	if err != nil {
		_ = p.stop(e.log)
		return nil, fmt.Errorf("plugin %s: %w", e.name, err)
	}
	e.info, e.cur = mi, p
	e.closing, e.stopClosing = context.WithCancel(context.Background())
	live.Lock()
	live.m[e] = struct{}{}
	live.Unlock()
	e.log.Debug("plugin started", "model", mi.ID, "dim", mi.Dim, "max_batch", mi.MaxBatch)
	return e, nil
}

func resolve(path string) (string, error) {
	if !strings.ContainsRune(path, filepath.Separator) {
		p, err := exec.LookPath(path)
		if err != nil {
			return "", fmt.Errorf("%w: plugin %q: not found in PATH; give a path such as ./%s", driver.ErrInvalid, path, path)
		}
		path = p
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("%w: plugin %q: %v", driver.ErrInvalid, path, err)
	}
	st, err := os.Stat(abs)
	switch {
	case err != nil:
		return "", fmt.Errorf("%w: plugin %q: %v; build the plugin or fix embedder.plugin.path", driver.ErrInvalid, path, err)
	case st.IsDir():
		return "", fmt.Errorf("%w: plugin %q is a directory, not an executable", driver.ErrInvalid, path)
	case st.Mode()&0o111 == 0:
		return "", fmt.Errorf("%w: plugin %q is not executable (chmod +x it)", driver.ErrInvalid, path)
	}
	return abs, nil
}

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

// start runs a new plugin process and connects to it.
func (e *Embedder) start(ctx context.Context) (*proc, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("plugin %s: start: %w", e.name, err)
	}
	cmd := exec.Command(e.path, e.cfg.Args...)
	cmd.Env = os.Environ()
	for _, k := range slices.Sorted(maps.Keys(e.cfg.Env)) {
		cmd.Env = append(cmd.Env, k+"="+e.cfg.Env[k])
	}
	dieWithParent(cmd)
	cc := &plugin.ClientConfig{
		HandshakeConfig:  shim.Handshake,
		VersionedPlugins: shim.Plugins(nil),
		Cmd:              cmd,
		SkipHostEnv:      true, // cmd.Env already has it, with Config.Env taking precedence
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		AutoMTLS:         true,
		StartTimeout:     e.cfg.StartTimeout,
		Logger:           newHCLogger(e.log, filepath.Base(e.path)),
		GRPCDialOptions: []grpc.DialOption{
			grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMessage)),
			// Windows large enough for a whole batch of vectors: no flow-control round trips.
			grpc.WithInitialWindowSize(window), grpc.WithInitialConnWindowSize(window),
		},
		SyncStdout: newStreamWriter(e.log, "stdout"),
		SyncStderr: newStreamWriter(e.log, "stderr"),
	}
	if e.checksum != nil {
		cc.SecureConfig = &plugin.SecureConfig{Checksum: e.checksum, Hash: sha256.New()}
	}
	client := plugin.NewClient(cc)

	// go-plugin bounds the wait for the handshake line by StartTimeout, but
	// not the connection after it, so the whole start gets its own deadline.
	type result struct {
		p   *proc
		err error
	}
	done := make(chan result, 1)
	go func() {
		p, err := connect(client, cmd)
		if err != nil {
			// Bounded: the process either never started or is stopped
			// within closeGrace+reapWait.
			if cmd.Process != nil {
				_ = (&proc{client: client, cmd: cmd}).stop(e.log)
			} else {
				client.Kill()
			}
		}
		done <- result{p, err}
	}()
	timer := time.NewTimer(e.cfg.StartTimeout)
	defer timer.Stop()
	giveUp := func() {
		// connect returns within StartTimeout plus gRPC's dial bound; end
		// the process once it does. (On Linux the kernel also kills it if
		// memos exits first.)
		go func() {
			if r := <-done; r.err == nil {
				_ = r.p.stop(e.log)
			}
		}()
	}
	select {
	case r := <-done:
		if r.err != nil {
			return nil, e.startError(r.err)
		}
		return r.p, nil
	case <-timer.C:
		giveUp()
		return nil, fmt.Errorf("%w: plugin %s did not start and connect within %v (start_timeout)", driver.ErrUnavailable, e.name, e.cfg.StartTimeout)
	case <-ctx.Done():
		giveUp()
		return nil, fmt.Errorf("plugin %s: start: %w", e.name, ctx.Err())
	}
}

func connect(client *plugin.Client, cmd *exec.Cmd) (*proc, error) {
	rpc, err := client.Client()
	if err != nil {
		return nil, err
	}
	raw, err := rpc.Dispense(shim.PluginName)
	if err != nil {
		return nil, err
	}
	c, ok := raw.(*shim.Client)
	if !ok {
		return nil, fmt.Errorf("dispensed %T, want an embedder client", raw)
	}
	return &proc{client: client, cmd: cmd, rpc: c}, nil
}

// startError turns go-plugin's start errors into ones that say what to do.
func (e *Embedder) startError(err error) error {
	msg := err.Error()
	switch {
	case errors.Is(err, plugin.ErrChecksumsDoNotMatch):
		got, _ := FileChecksum(e.path)
		return fmt.Errorf("%w: plugin %s: checksum mismatch: the file %s has %s but the config expects sha256:%x; "+
			"if you rebuilt the plugin on purpose, update embedder.plugin.checksum", driver.ErrInvalid, e.name, e.path, got, e.checksum)
	case strings.Contains(msg, "incompatible API version"):
		return fmt.Errorf("%w: plugin %s speaks another memos plugin protocol version than this memos (%d): %s; "+
			"rebuild the plugin against the plugins/sdk of this memos version", driver.ErrInvalid, e.name, ProtocolVersion, msg)
	case strings.Contains(msg, "Unrecognized remote plugin message"), strings.Contains(msg, "exited before we could connect"):
		return fmt.Errorf("%w: plugin %s did not complete the plugin handshake (is it a memos embedder plugin that calls sdk.Serve? see its log lines above): %s",
			driver.ErrUnavailable, e.name, firstLine(msg))
	case strings.Contains(msg, "timeout while waiting for plugin to start"):
		return fmt.Errorf("%w: plugin %s did not start within %v (start_timeout)", driver.ErrUnavailable, e.name, e.cfg.StartTimeout)
	}
	return fmt.Errorf("%w: plugin %s: start: %v", driver.ErrUnavailable, e.name, err)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
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

func (e *Embedder) infoOf(ctx context.Context, p *proc) (driver.ModelInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, e.cfg.CallTimeout)
	defer cancel()
	return p.rpc.Info(ctx)
}

// current returns the running process, or ErrClosed.
func (e *Embedder) current() (*proc, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, fmt.Errorf("plugin %s: %w", e.name, driver.ErrClosed)
	}
	return e.cur, nil
}

// Info asks the plugin for its model info and checks that it has not
// changed since the plugin started.
func (e *Embedder) Info(ctx context.Context) (driver.ModelInfo, error) {
	var mi driver.ModelInfo
	err := e.call(ctx, "info", func(ctx context.Context, p *proc) (err error) {
		mi, err = p.rpc.Info(ctx)
		return err
	})
	if err != nil {
		return driver.ModelInfo{}, err
	}
	if mi != e.info {
		return driver.ModelInfo{}, fmt.Errorf("plugin %s changed its model info from %+v to %+v; an embedder's info must not change while it runs",
			e.name, e.info, mi)
	}
	return mi, nil
}

// Embed implements driver.Embedder. It accepts batches of any size.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("plugin %s: embed: %w", e.name, err)
	}
	if _, err := e.current(); err != nil {
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
		err := e.call(ctx, "embed", func(ctx context.Context, p *proc) (err error) {
			vs, err = p.rpc.Embed(ctx, chunk)
			return err
		})
		if err != nil {
			return nil, err
		}
		if len(vs) != len(chunk) {
			return nil, fmt.Errorf("plugin %s returned %d vectors for %d texts", e.name, len(vs), len(chunk))
		}
		for i, v := range vs {
			if len(v) != e.info.Dim {
				return nil, fmt.Errorf("%w: plugin %s returned a vector of %d dimensions for text %d, but its model %s has %d",
					driver.ErrDimensionMismatch, e.name, len(v), start+i, e.info.ID, e.info.Dim)
			}
		}
		out = append(out, vs...)
	}
	return out, nil
}

// call runs fn against the current process with the call timeout. If the
// process died, it restarts it and runs fn once more.
func (e *Embedder) call(ctx context.Context, op string, fn func(context.Context, *proc) error) error {
	p, err := e.current()
	if err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		cctx, cancel := context.WithTimeoutCause(ctx, e.cfg.CallTimeout, errCallTimeout)
		err = fn(cctx, p)
		timedOut := errors.Is(context.Cause(cctx), errCallTimeout)
		cancel()
		switch {
		case err == nil:
			return nil
		case ctx.Err() != nil:
			return fmt.Errorf("plugin %s: %s: %w", e.name, op, ctx.Err())
		case timedOut:
			go e.endIfFrozen(p, op)
			return fmt.Errorf("%w: plugin %s: %s did not answer within %v (call_timeout): the plugin may be hung or overloaded: %w",
				driver.ErrUnavailable, e.name, op, e.cfg.CallTimeout, context.DeadlineExceeded)
		case attempt == 0 && e.crashed(p, err):
			e.log.Warn("plugin process died during a call; restarting it and retrying once", "op", op, "error", err)
			if p, err = e.restart(ctx, p); err != nil {
				return err
			}
			continue
		}
		if e.crashed(p, err) {
			return fmt.Errorf("%w: plugin %s: %s: the plugin died again after a restart: %v", driver.ErrUnavailable, e.name, op, err)
		}
		return fmt.Errorf("plugin %s: %s: %w", e.name, op, err)
	}
}

// endIfFrozen ends p if, after a call timed out, it does not even answer a
// health check: it is frozen (stopped, wedged), not just slow, so the next
// call should start a new process rather than wait out call_timeout again.
func (e *Embedder) endIfFrozen(p *proc, op string) {
	if p.answers() {
		return
	}
	e.mu.Lock()
	replaced := e.cur != p // closed, or restarted by another call
	e.mu.Unlock()
	if replaced {
		return
	}
	e.log.Warn("plugin does not answer a health check after a call timed out; ending it (the next call starts a new process)",
		"op", op, "pid", p.cmd.Process.Pid)
	if err := p.stop(e.log); err != nil {
		e.log.Warn("could not end the frozen plugin", "error", err)
	}
}

// crashed reports whether err means the process is gone rather than that
// the plugin answered with an error.
func (e *Embedder) crashed(p *proc, err error) bool {
	var se *shim.Error
	if errors.As(err, &se) && se.FromPlugin {
		return false
	}
	if p.client.Exited() {
		return true
	}
	if !errors.Is(err, driver.ErrUnavailable) {
		return false
	}
	return !p.answers()
}

// answers reports whether the process answers a health check within
// pingTimeout. (go-plugin's Ping has no deadline: a frozen plugin would
// never answer it.)
func (p *proc) answers() bool {
	rpc, err := p.client.Client()
	if err != nil {
		return false
	}
	gc, ok := rpc.(*plugin.GRPCClient)
	if !ok {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), pingTimeout)
	defer cancel()
	_, err = grpc_health_v1.NewHealthClient(gc.Conn).Check(ctx, &grpc_health_v1.HealthCheckRequest{Service: plugin.GRPCServiceName})
	return err == nil
}

// restart replaces the dead process old with a new one, unless another call
// already did. Close cancels a restart in progress.
func (e *Embedder) restart(ctx context.Context, old *proc) (*proc, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(e.closing, cancel)()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, fmt.Errorf("plugin %s: %w", e.name, driver.ErrClosed)
	}
	if e.cur != old {
		return e.cur, nil
	}
	if err := old.stop(e.log); err != nil {
		e.log.Warn("could not end the dead plugin process", "error", err)
	}
	p, err := e.start(ctx)
	if err != nil {
		return nil, fmt.Errorf("plugin %s crashed and could not be restarted: %w", e.name, err)
	}
	mi, err := e.infoOf(ctx, p)
	if err == nil && mi != e.info {
		err = fmt.Errorf("it reports model %+v after the restart, %+v before", mi, e.info)
	}
	if err != nil {
		_ = p.stop(e.log)
		return nil, fmt.Errorf("plugin %s crashed and the restarted process failed: %w", e.name, err)
	}
	e.cur = p
	return p, nil
}

// Close ends the plugin process, within about a second even if the plugin
// is frozen: a plugin that does not shut down cleanly within closeGrace is
// killed (SIGKILL). Calls in progress fail; later calls return
// driver.ErrClosed. Close may be called more than once and concurrently;
// every call returns once the process has ended, with the same error.
func (e *Embedder) Close() error {
	e.closeOnce.Do(func() {
		e.stopClosing() // a restart in progress gives up and releases mu
		e.mu.Lock()
		p := e.cur
		e.cur, e.closed = nil, true
		e.mu.Unlock()
		live.Lock()
		delete(live.m, e)
		live.Unlock()
		if p != nil {
			if err := p.stop(e.log); err != nil {
				e.closeErr = fmt.Errorf("plugin %s: close: %w", e.name, err)
			}
		}
	})
	return e.closeErr
}

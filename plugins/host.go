package plugins

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/plugins/internal/pb"
	"github.com/memos-go/memos/plugins/internal/shim"
)

// The kinds of plugin: the services a plugin process may serve, named as
// in the go-plugin plugin set and in `memos plugin test`.
const (
	KindEmbedder = shim.PluginName         // "embedder"
	KindReranker = shim.RerankerPluginName // "reranker"
)

// serviceKinds maps the gRPC service names to the kinds.
var serviceKinds = map[string]string{
	pb.Embedder_ServiceDesc.ServiceName: KindEmbedder,
	pb.Reranker_ServiceDesc.ServiceName: KindReranker,
}

// host runs one plugin process for one kind of service and is what an
// Embedder or a Reranker delegates to: it starts the process, bounds every
// call by CallTimeout, restarts a process that died and retries the call
// once, ends a frozen one, and ends the process on Close. It is safe for
// concurrent use.
type host struct {
	cfg      Config
	kind     string // KindEmbedder, KindReranker; "" only looks (Kinds)
	name     string // base name of the binary, for messages and logs
	path     string
	checksum []byte
	log      *slog.Logger
	// ready checks a newly started process (also after a restart) before
	// it serves calls, within CallTimeout; nil accepts it.
	ready func(ctx context.Context, p *proc) error

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

// proc is one plugin process and its gRPC client.
type proc struct {
	client *plugin.Client
	cmd    *exec.Cmd // started by client; its Process is what stop kills
	conn   *grpc.ClientConn
	rpc    any // the dispensed client of the host's kind: *shim.Client, *shim.RerankerClient

	stopOnce sync.Once
	stopErr  error
	// ended is set as soon as stop begins: a call that fails because its
	// connection is being torn down (gRPC's Canceled, "the client
	// connection is closing") counts as a crash even before the process
	// has been reaped and client.Exited reports it.
	ended atomic.Bool
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
// that answered a call with an error, and the question which services a
// plugin serves.
const pingTimeout = 5 * time.Second

// stop ends the process: cleanly if it answers within closeGrace, else by
// SIGKILL. It returns within closeGrace+reapWait whatever the plugin does.
// Concurrent and later calls wait for the first and return its error.
func (p *proc) stop(log *slog.Logger) error {
	p.ended.Store(true)
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

// live holds every open host, for KillAll.
var live = struct {
	sync.Mutex
	m map[*host]struct{}
}{m: make(map[*host]struct{})}

// KillAll closes every open plugin (Embedder and Reranker) and so ends
// their processes. Programs call it on exit and on interrupt (a plugin
// ignores SIGINT so that Ctrl-C in a terminal leaves the host in charge of
// its shutdown). It may be called many times. On Linux a plugin also gets
// SIGKILL when the host dies without cleaning up, so no plugin outlives
// memos.
//
// (go-plugin's own CleanupClients is not used: it may run only once per
// process, and its list of clients only grows, by one per restart.)
func KillAll() {
	live.Lock()
	hs := slices.Collect(maps.Keys(live.m))
	live.Unlock()
	var wg sync.WaitGroup
	for _, h := range hs {
		wg.Go(func() { _ = h.Close() })
	}
	wg.Wait()
}

// maxMessage bounds one gRPC message. gRPC's default (4 MB) is less than
// a few hundred large vectors; chunking (maxChunk) keeps messages well below.
const maxMessage = 256 << 20

// window is the HTTP/2 flow-control window for answers from the plugin.
const window = 16 << 20

// errCallTimeout is the cancellation cause of a call that hit CallTimeout.
var errCallTimeout = errors.New("plugin call timeout")

// openHost checks cfg, starts the plugin and runs ready on it. The host
// is registered for KillAll once it runs. Errors wrap driver.ErrInvalid for
// configuration problems (no such file, bad or mismatched checksum, wrong
// protocol version, a plugin of another kind) and driver.ErrUnavailable
// when the process fails to start.
func openHost(ctx context.Context, cfg Config, kind string, ready func(context.Context, *proc) error) (*host, error) {
	key := "embedder"
	if kind == KindReranker {
		key = "reranker"
	}
	if cfg.Path == "" {
		return nil, fmt.Errorf("%w: plugin: path is empty; set %s.plugin.path to the plugin binary", driver.ErrInvalid, key)
	}
	h := &host{cfg: cfg, kind: kind, name: filepath.Base(cfg.Path), log: cfg.Logger, ready: ready}
	if h.log == nil {
		h.log = slog.Default()
	}
	h.log = h.log.With("plugin", h.name)
	if h.cfg.StartTimeout <= 0 {
		h.cfg.StartTimeout = DefaultStartTimeout
	}
	if h.cfg.CallTimeout <= 0 {
		h.cfg.CallTimeout = DefaultCallTimeout
	}
	path, err := resolve(cfg.Path, key)
	if err != nil {
		return nil, err
	}
	h.path = path
	if cfg.Checksum != "" {
		if h.checksum, err = ParseChecksum(cfg.Checksum); err != nil {
			return nil, fmt.Errorf("plugin %s: %w", h.name, err)
		}
	}
	p, err := h.start(ctx)
	if err != nil {
		return nil, err
	}
	h.cur = p
	h.closing, h.stopClosing = context.WithCancel(context.Background())
	live.Lock()
	live.m[h] = struct{}{}
	live.Unlock()
	return h, nil
}

func resolve(path, key string) (string, error) {
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
		return "", fmt.Errorf("%w: plugin %q: %v; build the plugin or fix %s.plugin.path", driver.ErrInvalid, path, err, key)
	case st.IsDir():
		return "", fmt.Errorf("%w: plugin %q is a directory, not an executable", driver.ErrInvalid, path)
	case st.Mode()&0o111 == 0:
		return "", fmt.Errorf("%w: plugin %q is not executable (chmod +x it)", driver.ErrInvalid, path)
	}
	return abs, nil
}

// start runs a new plugin process, connects to it, checks that it serves
// the host's kind and runs ready.
func (h *host) start(ctx context.Context) (*proc, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("plugin %s: start: %w", h.name, err)
	}
	cmd := exec.Command(h.path, h.cfg.Args...)
	cmd.Env = os.Environ()
	for _, k := range slices.Sorted(maps.Keys(h.cfg.Env)) {
		cmd.Env = append(cmd.Env, k+"="+h.cfg.Env[k])
	}
	dieWithParent(cmd)
	cc := &plugin.ClientConfig{
		HandshakeConfig:  shim.Handshake,
		VersionedPlugins: shim.HostPlugins(),
		Cmd:              cmd,
		SkipHostEnv:      true, // cmd.Env already has it, with Config.Env taking precedence
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		AutoMTLS:         true,
		StartTimeout:     h.cfg.StartTimeout,
		Logger:           newHCLogger(h.log, filepath.Base(h.path)),
		GRPCDialOptions: []grpc.DialOption{
			grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMessage)),
			// Windows large enough for a whole batch of vectors: no flow-control round trips.
			grpc.WithInitialWindowSize(window), grpc.WithInitialConnWindowSize(window),
		},
		SyncStdout: newStreamWriter(h.log, "stdout"),
		SyncStderr: newStreamWriter(h.log, "stderr"),
	}
	if h.checksum != nil {
		cc.SecureConfig = &plugin.SecureConfig{Checksum: h.checksum, Hash: sha256.New()}
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
		p, err := connect(client, cmd, h.kind)
		if err != nil {
			// Bounded: the process either never started or is stopped
			// within closeGrace+reapWait.
			if cmd.Process != nil {
				_ = (&proc{client: client, cmd: cmd}).stop(h.log)
			} else {
				client.Kill()
			}
		}
		done <- result{p, err}
	}()
	timer := time.NewTimer(h.cfg.StartTimeout)
	defer timer.Stop()
	giveUp := func() {
		// connect returns within StartTimeout plus gRPC's dial bound; end
		// the process once it does. (On Linux the kernel also kills it if
		// memos exits first.)
		go func() {
			if r := <-done; r.err == nil {
				_ = r.p.stop(h.log)
			}
		}()
	}
	var p *proc
	select {
	case r := <-done:
		if r.err != nil {
			return nil, h.startError(r.err)
		}
		p = r.p
	case <-timer.C:
		giveUp()
		return nil, fmt.Errorf("%w: plugin %s did not start and connect within %v (start_timeout)", driver.ErrUnavailable, h.name, h.cfg.StartTimeout)
	case <-ctx.Done():
		giveUp()
		return nil, fmt.Errorf("plugin %s: start: %w", h.name, ctx.Err())
	}
	err := h.checkKind(ctx, p)
	if err == nil && h.ready != nil {
		rctx, cancel := context.WithTimeout(ctx, h.cfg.CallTimeout)
		err = h.ready(rctx, p)
		cancel()
	}
	if err != nil {
		_ = p.stop(h.log)
		return nil, fmt.Errorf("plugin %s: %w", h.name, err)
	}
	return p, nil
}

func connect(client *plugin.Client, cmd *exec.Cmd, kind string) (*proc, error) {
	rpc, err := client.Client()
	if err != nil {
		return nil, err
	}
	p := &proc{client: client, cmd: cmd}
	if gc, ok := rpc.(*plugin.GRPCClient); ok {
		p.conn = gc.Conn
	}
	if kind == "" {
		return p, nil
	}
	if p.rpc, err = rpc.Dispense(kind); err != nil {
		return nil, err
	}
	return p, nil
}

// checkKind refuses a plugin that does not serve the host's kind (an
// embedder configured as a reranker, say), so that the mistake shows at
// start with a message saying what the binary is, not at the first call.
// A plugin that does not answer the question (no gRPC reflection: possible
// in other languages) is given the benefit of the doubt.
func (h *host) checkKind(ctx context.Context, p *proc) error {
	if h.kind == "" {
		return nil
	}
	kinds, err := p.kinds(ctx)
	if err != nil || slices.Contains(kinds, h.kind) {
		return nil
	}
	serves := "no memos service"
	if len(kinds) > 0 {
		serves = "only: " + strings.Join(kinds, ", ")
	}
	return fmt.Errorf("%w: the binary is not %s plugin (it serves %s); configure it as %s.plugin instead, or build it with the sdk's serve call for %s",
		driver.ErrInvalid, article(h.kind), serves, firstOr(kinds, "the matching kind"), article(h.kind))
}

// article puts "a" or "an" before a kind.
func article(kind string) string {
	if strings.ContainsRune("aeiou", rune(kind[0])) {
		return "an " + kind
	}
	return "a " + kind
}

func firstOr(s []string, def string) string {
	if len(s) > 0 {
		return s[0]
	}
	return def
}

// kinds asks the plugin's gRPC reflection service which memos services it
// serves, sorted.
func (p *proc) kinds(ctx context.Context) ([]string, error) {
	if p.conn == nil {
		return nil, errors.New("no gRPC connection")
	}
	ctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	stream, err := grpc_reflection_v1.NewServerReflectionClient(p.conn).ServerReflectionInfo(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = stream.CloseSend() }()
	req := &grpc_reflection_v1.ServerReflectionRequest{
		MessageRequest: &grpc_reflection_v1.ServerReflectionRequest_ListServices{ListServices: "*"},
	}
	if err := stream.Send(req); err != nil {
		return nil, err
	}
	resp, err := stream.Recv()
	if err != nil {
		return nil, err
	}
	if e := resp.GetErrorResponse(); e != nil {
		return nil, status.Error(codes.Code(e.GetErrorCode()), e.GetErrorMessage())
	}
	var out []string
	for _, s := range resp.GetListServicesResponse().GetService() {
		if k, ok := serviceKinds[s.GetName()]; ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out, nil
}

// Kinds starts the plugin cfg.Path, asks which kinds of memos service it
// serves (KindEmbedder, KindReranker; sorted) and ends it. It is how
// `memos plugin test` decides which conformance cases to run. A plugin
// without gRPC reflection (not one built with plugins/sdk) gives an error.
func Kinds(ctx context.Context, cfg Config) ([]string, error) {
	h, err := openHost(ctx, cfg, "", nil)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	p, err := h.current()
	if err != nil {
		return nil, err
	}
	kinds, err := p.kinds(ctx)
	if err != nil {
		return nil, fmt.Errorf("plugin %s: cannot tell which services it serves (gRPC reflection): %v", h.name, err)
	}
	return kinds, nil
}

// startError turns go-plugin's start errors into ones that say what to do.
func (h *host) startError(err error) error {
	msg := err.Error()
	switch {
	case errors.Is(err, plugin.ErrChecksumsDoNotMatch):
		got, _ := FileChecksum(h.path)
		return fmt.Errorf("%w: plugin %s: checksum mismatch: the file %s has %s but the config expects sha256:%x; "+
			"if you rebuilt the plugin on purpose, update the plugin's checksum in the config", driver.ErrInvalid, h.name, h.path, got, h.checksum)
	case strings.Contains(msg, "incompatible API version"):
		return fmt.Errorf("%w: plugin %s speaks another memos plugin protocol version than this memos (%d): %s; "+
			"rebuild the plugin against the plugins/sdk of this memos version", driver.ErrInvalid, h.name, ProtocolVersion, msg)
	case strings.Contains(msg, "Unrecognized remote plugin message"), strings.Contains(msg, "exited before we could connect"):
		return fmt.Errorf("%w: plugin %s did not complete the plugin handshake (is it a memos plugin that calls sdk.Serve or sdk.ServeReranker? see its log lines above): %s",
			driver.ErrUnavailable, h.name, firstLine(msg))
	case strings.Contains(msg, "timeout while waiting for plugin to start"):
		return fmt.Errorf("%w: plugin %s did not start within %v (start_timeout)", driver.ErrUnavailable, h.name, h.cfg.StartTimeout)
	}
	return fmt.Errorf("%w: plugin %s: start: %v", driver.ErrUnavailable, h.name, err)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// current returns the running process, or ErrClosed.
func (h *host) current() (*proc, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, fmt.Errorf("plugin %s: %w", h.name, driver.ErrClosed)
	}
	return h.cur, nil
}

// call runs fn against the current process with the call timeout. If the
// process died, it restarts it and runs fn once more.
func (h *host) call(ctx context.Context, op string, fn func(context.Context, *proc) error) error {
	p, err := h.current()
	if err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		deadline := time.Now().Add(h.cfg.CallTimeout)
		cctx, cancel := context.WithDeadlineCause(ctx, deadline, errCallTimeout)
		err = fn(cctx, p)
		// The plugin's end of the call has the same deadline and may
		// cancel the stream a moment before the timer here fires: a
		// failure at or after the deadline is the timeout.
		timedOut := errors.Is(context.Cause(cctx), errCallTimeout) ||
			(err != nil && ctx.Err() == nil && !time.Now().Before(deadline))
		cancel()
		switch {
		case err == nil:
			return nil
		case ctx.Err() != nil:
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				// The caller's own deadline (a search's rerank_timeout)
				// ran out: as after call_timeout, find out whether the
				// plugin is frozen rather than slow.
				go h.endIfFrozen(p, op)
			}
			return fmt.Errorf("plugin %s: %s: %w", h.name, op, ctx.Err())
		case timedOut:
			go h.endIfFrozen(p, op)
			return fmt.Errorf("%w: plugin %s: %s did not answer within %v (call_timeout): the plugin may be hung or overloaded: %w",
				driver.ErrUnavailable, h.name, op, h.cfg.CallTimeout, context.DeadlineExceeded)
		case attempt == 0 && h.crashed(p, err):
			h.log.Warn("plugin process died during a call; restarting it and retrying once", "op", op, "error", err)
			if p, err = h.restart(ctx, p); err != nil {
				return err
			}
			continue
		}
		if h.crashed(p, err) {
			return fmt.Errorf("%w: plugin %s: %s: the plugin died again after a restart: %v", driver.ErrUnavailable, h.name, op, err)
		}
		return fmt.Errorf("plugin %s: %s: %w", h.name, op, err)
	}
}

// endIfFrozen ends p if, after a call timed out (call_timeout or the
// caller's deadline), it does not even answer a
// health check: it is frozen (stopped, wedged), not just slow, so the next
// call should start a new process rather than wait out call_timeout again.
func (h *host) endIfFrozen(p *proc, op string) {
	if p.answers() {
		return
	}
	h.mu.Lock()
	replaced := h.cur != p // closed, or restarted by another call
	h.mu.Unlock()
	if replaced {
		return
	}
	h.log.Warn("plugin does not answer a health check after a call timed out; ending it (the next call starts a new process)",
		"op", op, "pid", p.cmd.Process.Pid)
	if err := p.stop(h.log); err != nil {
		h.log.Warn("could not end the frozen plugin", "error", err)
	}
}

// crashed reports whether err means the process is gone rather than that
// the plugin answered with an error.
func (h *host) crashed(p *proc, err error) bool {
	var se *shim.Error
	if errors.As(err, &se) && se.FromPlugin {
		return false
	}
	if p.ended.Load() || p.client.Exited() {
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
	if p.conn == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), pingTimeout)
	defer cancel()
	_, err := grpc_health_v1.NewHealthClient(p.conn).Check(ctx, &grpc_health_v1.HealthCheckRequest{Service: plugin.GRPCServiceName})
	return err == nil
}

// restart replaces the dead process old with a new one, unless another call
// already did. Close cancels a restart in progress.
func (h *host) restart(ctx context.Context, old *proc) (*proc, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(h.closing, cancel)()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, fmt.Errorf("plugin %s: %w", h.name, driver.ErrClosed)
	}
	if h.cur != old {
		return h.cur, nil
	}
	if err := old.stop(h.log); err != nil {
		h.log.Warn("could not end the dead plugin process", "error", err)
	}
	p, err := h.start(ctx)
	if err != nil {
		return nil, fmt.Errorf("plugin %s crashed and could not be restarted: %w", h.name, err)
	}
	h.cur = p
	return p, nil
}

// Close ends the plugin process, within about a second even if the plugin
// is frozen: a plugin that does not shut down cleanly within closeGrace is
// killed (SIGKILL). Calls in progress fail; later calls return
// driver.ErrClosed. Close may be called more than once and concurrently;
// every call returns once the process has ended, with the same error.
func (h *host) Close() error {
	h.closeOnce.Do(func() {
		h.stopClosing() // a restart in progress gives up and releases mu
		h.mu.Lock()
		p := h.cur
		h.cur, h.closed = nil, true
		h.mu.Unlock()
		live.Lock()
		delete(live.m, h)
		live.Unlock()
		if p != nil {
			if err := p.stop(h.log); err != nil {
				h.closeErr = fmt.Errorf("plugin %s: close: %w", h.name, err)
			}
		}
	})
	return h.closeErr
}

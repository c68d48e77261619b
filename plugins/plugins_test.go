package plugins_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/embedtest"
	"github.com/memos-go/memos/core/testbin"
	"github.com/memos-go/memos/plugins"
	"github.com/memos-go/memos/plugins/internal/testembed"
)

// bin holds the binaries TestMain builds.
var bin struct{ plugin, host string }

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "memos-plugins-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for out, pkg := range map[*string]string{&bin.plugin: "./testdata/testplugin", &bin.host: "./testdata/testhost"} {
		if *out, err = testbin.BuildIn(dir, pkg); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	code := m.Run()
	plugins.KillAll()
	os.RemoveAll(dir)
	os.Exit(code)
}

// logRec records log records so tests can wait for a plugin's lines.
type logRec struct {
	mu      sync.Mutex
	lines   []string // message followed by its attributes
	changed chan struct{}
}

func newLogRec() *logRec { return &logRec{changed: make(chan struct{})} }

type recHandler struct {
	r     *logRec
	attrs []slog.Attr
}

func (h recHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h recHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", r.Level, r.Message)
	for _, a := range h.attrs {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
	}
	r.Attrs(func(a slog.Attr) bool { fmt.Fprintf(&b, " %s=%v", a.Key, a.Value); return true })
	h.r.mu.Lock()
	h.r.lines = append(h.r.lines, b.String())
	close(h.r.changed)
	h.r.changed = make(chan struct{})
	h.r.mu.Unlock()
	return nil
}

func (h recHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return recHandler{r: h.r, attrs: append(append([]slog.Attr(nil), h.attrs...), as...)}
}

func (h recHandler) WithGroup(string) slog.Handler { return h }

func (r *logRec) logger() *slog.Logger { return slog.New(recHandler{r: r}) }

// wait blocks until a line contains all of parts, or fails the test after
// a generous bound (a guard against hanging, not a speed check).
func (r *logRec) wait(t *testing.T, parts ...string) string {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		r.mu.Lock()
		for _, l := range r.lines {
			if containsAll(l, parts) {
				r.mu.Unlock()
				return l
			}
		}
		ch := r.changed
		r.mu.Unlock()
		select {
		case <-ch:
		case <-deadline:
			r.mu.Lock()
			defer r.mu.Unlock()
			t.Fatalf("no log line with %q; got:\n%s", parts, strings.Join(r.lines, "\n"))
		}
	}
}

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// open starts the test plugin in mode with extra environment.
func open(t testing.TB, mode string, env map[string]string, mod func(*plugins.Config)) *plugins.Embedder {
	t.Helper()
	e, err := plugins.Open(context.Background(), config(t, mode, env, mod))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func config(t testing.TB, mode string, env map[string]string, mod func(*plugins.Config)) plugins.Config {
	if env == nil {
		env = map[string]string{}
	}
	env["MEMOS_TESTPLUGIN_MODE"] = mode
	cfg := plugins.Config{
		Path:   bin.plugin,
		Env:    env,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	if testing.Verbose() {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	if mod != nil {
		mod(&cfg)
	}
	return cfg
}

func TestConformance(t *testing.T) {
	e := open(t, "good", nil, nil)
	embedtest.Run(t, e, append(embedtest.Cases(), embedtest.HostSplitsBatches)...)
}

func TestSplitsBatchesInOrder(t *testing.T) {
	e := open(t, "good", nil, nil)
	texts := make([]string, 11) // max batch is 4: chunks of 4, 4, 3
	for i := range texts {
		texts[i] = fmt.Sprintf("text %d about topic %d", i, i*7)
	}
	got, err := e.Embed(t.Context(), texts)
	if err != nil {
		t.Fatal(err)
	}
	want, err := testembed.Embedder{Dim: 32}.Embed(t.Context(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if fmt.Sprint(got[i]) != fmt.Sprint(want[i]) {
			t.Fatalf("vector %d differs from the in-process embedder's", i)
		}
	}
}

func TestInfo(t *testing.T) {
	e := open(t, "good", nil, nil)
	mi, err := e.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := driver.ModelInfo{ID: "testembed-v1", Dim: 32, MaxBatch: 4, Normalized: true}
	if mi != want {
		t.Fatalf("Info = %+v, want %+v", mi, want)
	}
}

func readPID(t *testing.T, file string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(string(b))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// alive reports whether pid is a running (not zombie) process.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return syscall.Kill(pid, 0) == nil
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

func waitDead(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); alive(pid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("plugin process %d is still running", pid)
		}
	}
}

// TestCrashRestartsAndRetries has the plugin die on the second of three
// chunks of one batch: the host restarts it, retries that chunk, and the
// caller gets the full, correct answer.
func TestCrashRestartsAndRetries(t *testing.T) {
	state := t.TempDir()
	pidfile := filepath.Join(state, "pid")
	rec := newLogRec()
	e := open(t, "crash", map[string]string{
		"MEMOS_TESTPLUGIN_STATE": state, "MEMOS_TESTPLUGIN_PIDFILE": pidfile, "MEMOS_TESTPLUGIN_CRASH_AT": "2",
	}, func(c *plugins.Config) { c.Logger = rec.logger() })
	first := readPID(t, pidfile)
	texts := make([]string, 11) // max batch 4: chunks of 4, 4, 3
	for i := range texts {
		texts[i] = fmt.Sprintf("survives a crash, text %d", i)
	}
	vs, err := e.Embed(t.Context(), texts)
	if err != nil {
		t.Fatalf("Embed across a crash: %v", err)
	}
	want, _ := testembed.Embedder{Dim: 32}.Embed(t.Context(), texts)
	if fmt.Sprint(vs) != fmt.Sprint(want) {
		t.Fatal("the vectors of a batch that spanned a restart are wrong")
	}
	if _, err := os.Stat(filepath.Join(state, "crashed")); err != nil {
		t.Fatal("the plugin never crashed, so the test proves nothing")
	}
	second := readPID(t, pidfile)
	if second == first {
		t.Fatal("the plugin was not restarted")
	}
	rec.wait(t, "WARN", "restarting", "plugin=testplugin")
	waitDead(t, first)
	if _, err := e.Embed(t.Context(), []string{"and keeps working"}); err != nil {
		t.Fatal(err)
	}
}

func TestCrashTwiceFails(t *testing.T) {
	e := open(t, "crashalways", nil, nil)
	_, err := e.Embed(t.Context(), []string{"x"})
	if !errors.Is(err, driver.ErrUnavailable) || !strings.Contains(err.Error(), "died again") {
		t.Fatalf("want an unavailable error saying it died again, got %v", err)
	}
}

func TestHungCallTimesOut(t *testing.T) {
	e := open(t, "hang", nil, func(c *plugins.Config) { c.CallTimeout = 300 * time.Millisecond })
	_, err := e.Embed(t.Context(), []string{"never answered"})
	if !errors.Is(err, driver.ErrUnavailable) {
		t.Fatalf("want ErrUnavailable, got %v", err)
	}
	for _, want := range []string{"testplugin", "call_timeout", "hung"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

// stopped reports whether pid is stopped by a signal (state T in
// /proc/<pid>/stat).
func stopped(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && (s[i+2] == 'T' || s[i+2] == 't')
}

// within runs f and fails the test if it has not returned after a generous
// bound: a guard against hanging, not a speed check. killPid is sent
// SIGKILL on a hang, so that the frozen plugin does not outlive the test.
func within[T any](t *testing.T, what string, killPid func() int, f func() T) T {
	t.Helper()
	done := make(chan T, 1)
	go func() { done <- f() }()
	select {
	case v := <-done:
		return v
	case <-time.After(20 * time.Second):
		if pid := killPid(); pid > 0 {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		t.Fatalf("%s did not return within 20s: it hangs", what)
		panic("unreachable")
	}
}

// openFrozen starts the plugin in freeze mode, whose Embed stops the whole
// process with SIGSTOP; the returned function reads its pid.
func openFrozen(t *testing.T, callTimeout time.Duration) (*plugins.Embedder, func() int) {
	pidfile := filepath.Join(t.TempDir(), "pid")
	e := open(t, "freeze", map[string]string{"MEMOS_TESTPLUGIN_PIDFILE": pidfile}, func(c *plugins.Config) { c.CallTimeout = callTimeout })
	pid := readPID(t, pidfile)
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) }) // if the test failed midway
	return e, func() int { return pid }
}

// TestFrozenPlugin: a plugin process that is stopped (SIGSTOP) during a
// call neither answers the call nor go-plugin's shutdown request. The call
// must fail at call_timeout, and Close must still end the process.
func TestFrozenPlugin(t *testing.T) {
	e, pid := openFrozen(t, time.Second)
	err := within(t, "Embed on a frozen plugin", pid, func() error {
		_, err := e.Embed(t.Context(), []string{"freezes the plugin"})
		return err
	})
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, driver.ErrUnavailable) || !strings.Contains(err.Error(), "call_timeout") {
		t.Fatalf("want an unavailable, deadline-exceeded error naming call_timeout, got %v", err)
	}
	if !stopped(pid()) {
		t.Fatal("the plugin process is not stopped, so the test proves nothing")
	}
	if err := within(t, "Close of a frozen plugin", pid, e.Close); err != nil {
		t.Fatalf("Close: %v", err)
	}
	waitDead(t, pid())
	if _, err := e.Embed(t.Context(), []string{"x"}); !errors.Is(err, driver.ErrClosed) {
		t.Fatalf("Embed after Close: %v", err)
	}
}

// TestFrozenPluginReplaced: after a call timed out on a frozen plugin, the
// host ends that process (it does not answer a health check either) and the
// next call runs on a new one instead of waiting out call_timeout again.
func TestFrozenPluginReplaced(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pid")
	e := open(t, "freeze", map[string]string{"MEMOS_TESTPLUGIN_PIDFILE": pidfile}, func(c *plugins.Config) { c.CallTimeout = time.Second })
	first := readPID(t, pidfile)
	t.Cleanup(func() { syscall.Kill(first, syscall.SIGKILL) })
	if _, err := e.Embed(t.Context(), []string{"freezes the plugin"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want a call timeout, got %v", err)
	}
	waitDead(t, first)
	mi, err := e.Info(t.Context()) // Info does not freeze the plugin
	if err != nil {
		t.Fatalf("Info after the frozen process was ended: %v", err)
	}
	if mi.ID != "testembed-v1" {
		t.Fatalf("Info = %+v", mi)
	}
	if second := readPID(t, pidfile); second == first || !alive(second) {
		t.Fatalf("no new plugin process: pid %d before, %d now", first, second)
	}
}

// TestCloseFrozenDuringCall closes the embedder while a call waits on a
// frozen plugin (call_timeout far away): Close ends the process and the
// call fails instead of waiting out its timeout.
func TestCloseFrozenDuringCall(t *testing.T) {
	e, pid := openFrozen(t, 10*time.Minute)
	errc := make(chan error, 1)
	go func() {
		_, err := e.Embed(t.Context(), []string{"freezes the plugin"})
		errc <- err
	}()
	for deadline := time.Now().Add(20 * time.Second); !stopped(pid()); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the plugin never stopped itself")
		}
	}
	// Two concurrent Closes, as when an interrupt's KillAll and the engine's
	// own Close meet: both return, and only once the process is gone.
	within(t, "two concurrent Closes of a frozen plugin", pid, func() error {
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				if err := e.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
				if alive(pid()) {
					t.Error("Close returned while the plugin process still runs")
				}
			})
		}
		wg.Wait()
		return nil
	})
	err := within(t, "a call in progress when Close ran", pid, func() error { return <-errc })
	if !errors.Is(err, driver.ErrClosed) {
		t.Fatalf("the call in progress: want ErrClosed, got %v", err)
	}
}

func TestCancellationReachesPlugin(t *testing.T) {
	rec := newLogRec()
	e := open(t, "wait", nil, func(c *plugins.Config) { c.Logger = rec.logger() })
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := e.Embed(ctx, []string{"slow"})
		errc <- err
	}()
	rec.wait(t, "embed started", "plugin=testplugin")
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
	rec.wait(t, "embed cancelled", "context canceled")
	rec.wait(t, "a plain line on stderr", "stream=stderr")
}

func TestLogForwarded(t *testing.T) {
	rec := newLogRec()
	open(t, "good", nil, func(c *plugins.Config) { c.Logger = rec.logger() })
	rec.wait(t, "INFO", "test plugin ready", "mode=good", "plugin=testplugin")
}

func TestErrorsMapToSentinels(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pid")
	e := open(t, "errors", map[string]string{"MEMOS_TESTPLUGIN_PIDFILE": pidfile}, nil)
	pid := readPID(t, pidfile)
	for _, tc := range []struct {
		text string
		want error
		msg  string
	}{
		{"invalid", driver.ErrInvalid, "not welcome here"},
		{"unavailable", driver.ErrUnavailable, "model server is down"},
		{"panic", nil, "asked to panic"},
	} {
		_, err := e.Embed(t.Context(), []string{tc.text})
		if err == nil || !strings.Contains(err.Error(), tc.msg) || !strings.Contains(err.Error(), "plugin testplugin") {
			t.Errorf("%s: got %v", tc.text, err)
		}
		if tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("%s: %v does not wrap %v", tc.text, err, tc.want)
		}
	}
	if readPID(t, pidfile) != pid || !alive(pid) {
		t.Fatal("an error answered by the plugin must not restart it")
	}
	if _, err := e.Embed(t.Context(), []string{"fine"}); err != nil {
		t.Fatal(err)
	}
}

func TestChecksum(t *testing.T) {
	sum, err := plugins.FileChecksum(bin.plugin)
	if err != nil {
		t.Fatal(err)
	}
	open(t, "good", nil, func(c *plugins.Config) { c.Checksum = sum })

	wrong := "sha256:" + strings.Repeat("ab", 32)
	_, err = plugins.Open(t.Context(), config(t, "good", nil, func(c *plugins.Config) { c.Checksum = wrong }))
	if !errors.Is(err, driver.ErrInvalid) || !strings.Contains(err.Error(), "checksum mismatch") || !strings.Contains(err.Error(), sum) {
		t.Fatalf("wrong checksum: got %v", err)
	}
	for _, bad := range []string{"md5:abcd", "sha256:xyz", "sha256:abcd", strings.TrimPrefix(sum, "sha256:")} {
		_, err = plugins.Open(t.Context(), config(t, "good", nil, func(c *plugins.Config) { c.Checksum = bad }))
		if !errors.Is(err, driver.ErrInvalid) || !strings.Contains(err.Error(), "64 hex digits") {
			t.Errorf("checksum %q: got %v", bad, err)
		}
	}
}

func TestWrongProtocolVersion(t *testing.T) {
	_, err := plugins.Open(t.Context(), config(t, "v2", nil, nil))
	if !errors.Is(err, driver.ErrInvalid) || !strings.Contains(err.Error(), "protocol version") {
		t.Fatalf("got %v", err)
	}
}

func TestNotAPlugin(t *testing.T) {
	_, err := plugins.Open(t.Context(), config(t, "junk", nil, nil))
	if !errors.Is(err, driver.ErrUnavailable) || !strings.Contains(err.Error(), "handshake") {
		t.Fatalf("got %v", err)
	}
}

func TestOpenErrors(t *testing.T) {
	for _, path := range []string{"", filepath.Join(t.TempDir(), "missing"), t.TempDir(), "no-such-plugin-in-path"} {
		_, err := plugins.Open(t.Context(), plugins.Config{Path: path})
		if !errors.Is(err, driver.ErrInvalid) {
			t.Errorf("path %q: got %v", path, err)
		}
	}
}

func TestCloseEndsProcess(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pid")
	e := open(t, "good", map[string]string{"MEMOS_TESTPLUGIN_PIDFILE": pidfile}, nil)
	pid := readPID(t, pidfile)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	waitDead(t, pid)
	if _, err := e.Embed(t.Context(), []string{"x"}); !errors.Is(err, driver.ErrClosed) {
		t.Fatalf("Embed after Close: %v", err)
	}
	if err := e.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestKillAll(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pid")
	e := open(t, "good", map[string]string{"MEMOS_TESTPLUGIN_PIDFILE": pidfile}, nil)
	pid := readPID(t, pidfile)
	plugins.KillAll()
	waitDead(t, pid)
	if _, err := e.Embed(t.Context(), []string{"x"}); !errors.Is(err, driver.ErrClosed) {
		t.Fatalf("Embed after KillAll: %v", err)
	}
}

// TestNoOrphanWhenHostDies kills a host with SIGKILL (no cleanup runs) and
// checks that its plugin goes too.
func TestNoOrphanWhenHostDies(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pid")
	host := exec.Command(bin.host, bin.plugin)
	host.Env = append(os.Environ(), "MEMOS_TESTPLUGIN_MODE=good", "MEMOS_TESTPLUGIN_PIDFILE="+pidfile)
	out, err := host.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 6)
	if _, err := io.ReadFull(out, buf); err != nil || string(buf) != "ready\n" {
		host.Process.Kill()
		host.Wait()
		t.Fatalf("host did not get ready: %q %v", buf, err)
	}
	pid := readPID(t, pidfile)
	if err := host.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	host.Wait()
	waitDead(t, pid)
}

func TestRegistered(t *testing.T) {
	d, err := driver.LookupEmbedder(plugins.Name)
	if err != nil {
		t.Fatal(err)
	}
	cfg, ok := d.NewConfig().(*plugins.Config)
	if !ok {
		t.Fatalf("NewConfig returned %T", d.NewConfig())
	}
	*cfg = config(t, "good", nil, nil)
	e, err := d.Open(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.(io.Closer).Close()
	if _, err := e.Embed(t.Context(), []string{"via the registry"}); err != nil {
		t.Fatal(err)
	}
}

func TestConcurrentCalls(t *testing.T) {
	e := open(t, "good", nil, nil)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Go(func() {
			texts := []string{fmt.Sprint("goroutine ", i), "shared", "x", "y", "z"}
			if _, err := e.Embed(t.Context(), texts); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

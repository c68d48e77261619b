package plugins_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memos-go/memos/backends/sqlite"
	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/provider/rerank/reranktest"
	"github.com/memos-go/memos/embedders/hash"
	"github.com/memos-go/memos/plugins"
	"github.com/memos-go/memos/plugins/internal/testrerank"
)

// openReranker starts the test plugin as a reranker in mode.
func openReranker(t testing.TB, mode string, env map[string]string, mod func(*plugins.Config)) *plugins.Reranker {
	t.Helper()
	if env == nil {
		env = map[string]string{}
	}
	env["MEMOS_TESTPLUGIN_KIND"] = "reranker"
	r, err := plugins.OpenReranker(context.Background(), config(t, mode, env, mod))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func TestRerankerConformance(t *testing.T) {
	reranktest.Run(t, openReranker(t, "good", nil, nil))
}

func TestRerankerScores(t *testing.T) {
	r := openReranker(t, "good", nil, nil)
	texts := []string{"apple pie", "the apple orchard visit", "stock price"}
	got, err := r.Rerank(t.Context(), "apple orchard", texts)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := testrerank.Reranker{}.Rerank(t.Context(), "apple orchard", texts)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("scores %v, want the in-process reranker's %v", got, want)
	}
	if got, err := r.Rerank(t.Context(), "q", nil); err != nil || len(got) != 0 {
		t.Fatalf("no texts: %v, %v", got, err)
	}
}

func TestRerankerCrashRestartsAndRetries(t *testing.T) {
	state := t.TempDir()
	pidfile := filepath.Join(state, "pid")
	r := openReranker(t, "crash", map[string]string{"MEMOS_TESTPLUGIN_STATE": state, "MEMOS_TESTPLUGIN_PIDFILE": pidfile}, nil)
	first := readPID(t, pidfile)
	got, err := r.Rerank(t.Context(), "apple", []string{"apple", "pear"})
	if err != nil || fmt.Sprint(got) != "[1 0]" {
		t.Fatalf("Rerank across a crash: %v, %v", got, err)
	}
	if readPID(t, pidfile) == first {
		t.Fatal("the plugin was not restarted")
	}
	waitDead(t, first)
}

func TestRerankerFailures(t *testing.T) {
	for _, tc := range []struct {
		mode, query string
		timeout     time.Duration
		want        error
		msg         string
	}{
		{"crashalways", "q", 0, driver.ErrUnavailable, "died again"},
		{"wrong", "q", 0, driver.ErrUnavailable, "returned 1 scores for 2 texts"},
		{"errors", "invalid", 0, driver.ErrInvalid, "not welcome here"},
		{"errors", "unavailable", 0, driver.ErrUnavailable, "model server is down"},
		{"errors", "panic", 0, nil, "reranker panicked"},
		{"hang", "q", 300 * time.Millisecond, driver.ErrUnavailable, "call_timeout"},
	} {
		t.Run(tc.mode+"/"+tc.query, func(t *testing.T) {
			r := openReranker(t, tc.mode, nil, func(c *plugins.Config) {
				if tc.timeout > 0 {
					c.CallTimeout = tc.timeout
				}
			})
			_, err := r.Rerank(t.Context(), tc.query, []string{"a", "b"})
			if err == nil || !strings.Contains(err.Error(), tc.msg) || !strings.Contains(err.Error(), "plugin testplugin") {
				t.Fatalf("got %v, want an error naming the plugin and %q", err, tc.msg)
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("%v does not wrap %v", err, tc.want)
			}
		})
	}
}

// TestFrozenRerankerReplaced: a search's deadline (rerank_timeout, far
// below call_timeout) ends a call to a frozen plugin; the host then finds
// that the process does not answer a health check either and ends it, so
// that the next call starts a new one.
func TestFrozenRerankerReplaced(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pid")
	r := openReranker(t, "freeze", map[string]string{"MEMOS_TESTPLUGIN_PIDFILE": pidfile}, nil)
	first := readPID(t, pidfile)
	t.Cleanup(func() { syscall.Kill(first, syscall.SIGKILL) })
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	if _, err := r.Rerank(ctx, "q", []string{"freezes the plugin"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want the caller's deadline, got %v", err)
	}
	waitDead(t, first)
}

func TestRerankerCancellationReachesPlugin(t *testing.T) {
	rec := newLogRec()
	r := openReranker(t, "wait", nil, func(c *plugins.Config) { c.Logger = rec.logger() })
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := r.Rerank(ctx, "q", []string{"slow"})
		errc <- err
	}()
	rec.wait(t, "rerank started", "plugin=testplugin")
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
	rec.wait(t, "rerank cancelled", "context canceled")
}

// TestKindMismatch configures a plugin as the kind it is not: the mistake
// shows at open, saying what the binary serves.
func TestKindMismatch(t *testing.T) {
	_, err := plugins.OpenReranker(t.Context(), config(t, "good", nil, nil))
	if !errors.Is(err, driver.ErrInvalid) || !strings.Contains(err.Error(), "not a reranker plugin (it serves only: embedder)") {
		t.Fatalf("an embedder opened as a reranker: %v", err)
	}
	_, err = plugins.Open(t.Context(), config(t, "good", map[string]string{"MEMOS_TESTPLUGIN_KIND": "reranker"}, nil))
	if !errors.Is(err, driver.ErrInvalid) || !strings.Contains(err.Error(), "not an embedder plugin (it serves only: reranker)") {
		t.Fatalf("a reranker opened as an embedder: %v", err)
	}
}

func TestKinds(t *testing.T) {
	for kind, want := range map[string]string{
		"":         "[embedder]",
		"reranker": "[reranker]",
		"both":     "[embedder reranker]",
	} {
		got, err := plugins.Kinds(t.Context(), config(t, "good", map[string]string{"MEMOS_TESTPLUGIN_KIND": kind}, nil))
		if err != nil || fmt.Sprint(got) != want {
			t.Errorf("kind %q: %v, %v; want %s", kind, got, err, want)
		}
	}
	// One binary serving both works as either.
	both := map[string]string{"MEMOS_TESTPLUGIN_KIND": "both"}
	e := open(t, "good", both, nil)
	if _, err := e.Embed(t.Context(), []string{"x"}); err != nil {
		t.Fatal(err)
	}
	r, err := plugins.OpenReranker(t.Context(), config(t, "good", both, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Rerank(t.Context(), "x", []string{"x"}); err != nil {
		t.Fatal(err)
	}
}

func TestRerankerRegistered(t *testing.T) {
	d, err := driver.LookupReranker(plugins.Name)
	if err != nil {
		t.Fatal(err)
	}
	cfg, ok := d.NewConfig().(*plugins.Config)
	if !ok {
		t.Fatalf("NewConfig returned %T", d.NewConfig())
	}
	*cfg = config(t, "good", map[string]string{"MEMOS_TESTPLUGIN_KIND": "reranker"}, nil)
	r, err := d.Open(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.(io.Closer).Close()
	if got, err := r.Rerank(t.Context(), "registry", []string{"via the registry"}); err != nil || len(got) != 1 {
		t.Fatal(got, err)
	}
}

// warnings records the engine's warnings (it logs through slog's default
// logger).
func warnings(t *testing.T) *logRec {
	rec := newLogRec()
	old := slog.Default()
	slog.SetDefault(rec.logger())
	t.Cleanup(func() { slog.SetDefault(old) })
	return rec
}

var notes = []string{
	"apple apple apple pie recipe with cinnamon",
	"apple apple crumble for dessert",
	"the apple orchard visit in autumn",
	"apple stock price fell",
}

// engineWith opens a real sqlite store with the hash embedder and r as its
// reranker, holding the notes.
func engineWith(t *testing.T, r core.Reranker, timeout time.Duration) *core.Engine {
	t.Helper()
	ctx := t.Context()
	b, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "memory.db")})
	if err != nil {
		t.Fatal(err)
	}
	emb, err := hash.Open(ctx, hash.Config{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := core.Open(ctx, core.Options{Backend: b, Embedder: emb, Reranker: r,
		Search: core.SearchConfig{RerankTimeout: timeout, DisableAccessTracking: true}})
	if err != nil {
		b.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	for _, n := range notes {
		if _, err := e.Remember(ctx, core.Input{Content: n}); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

func hitIDs(res *core.SearchResult) []int64 {
	var out []int64
	for _, h := range res.Hits {
		out = append(out, h.Memory.ID)
	}
	return out
}

// TestSearchWithRerankerPlugin: a working plugin reorders the search, and
// explain shows its scores.
func TestSearchWithRerankerPlugin(t *testing.T) {
	ctx := t.Context()
	req := core.SearchRequest{Query: "apple orchard autumn", NoExpand: true}
	base, err := engineWith(t, nil, 0).Search(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	e := engineWith(t, openReranker(t, "good", nil, nil), 0)
	res, err := e.Search(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) == 0 || res.Hits[0].Memory.Content != notes[2] {
		t.Fatalf("reranked %v (fused %v): want the orchard note first", hitIDs(res), hitIDs(base))
	}
	x, err := e.Explain(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(x.Rerank, "reranked the top") {
		t.Fatalf("explain rerank note %q", x.Rerank)
	}
	var scored int
	for _, c := range x.Candidates {
		if c.RerankScore != nil {
			scored++
			if c.ID == res.Hits[0].Memory.ID && *c.RerankScore != 1 {
				t.Errorf("the orchard note's reranker score is %v, want 1 (all three words)", *c.RerankScore)
			}
		}
	}
	if scored == 0 {
		t.Fatal("explain shows no reranker score")
	}
}

// TestBrokenRerankerPluginKeepsFusedOrder runs searches against plugin
// processes that hang, freeze, crash, answer wrongly or fail: each search
// succeeds with the fused order, and the engine logs a warning.
func TestBrokenRerankerPluginKeepsFusedOrder(t *testing.T) {
	ctx := t.Context()
	req := core.SearchRequest{Query: "apple orchard autumn", NoExpand: true}
	base, err := engineWith(t, nil, 0).Search(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ mode, note string }{
		{"hang", "rerank_timeout"},
		{"freeze", "rerank_timeout"},
		{"crashalways", "died again"},
		{"wrong", "scores for"},
		{"errors", "reranker panicked"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			rec := warnings(t)
			pidfile := filepath.Join(t.TempDir(), "pid")
			r := openReranker(t, tc.mode, map[string]string{"MEMOS_TESTPLUGIN_PIDFILE": pidfile}, nil)
			pid := readPID(t, pidfile)
			t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) }) // a frozen one, if the test fails midway
			// Hangs end at rerank_timeout; the others fail by themselves,
			// so theirs leaves room for a restart on a busy machine.
			timeout := 20 * time.Second
			if tc.mode == "hang" || tc.mode == "freeze" {
				timeout = 500 * time.Millisecond
			}
			e := engineWith(t, r, timeout)
			q := req
			if tc.mode == "errors" {
				q.Query = "panic apple" // the test plugin panics on this query
				base, err = engineWith(t, nil, 0).Search(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
			}
			res := within(t, "a search with a broken reranker", func() int { return pid }, func() *core.SearchResult {
				res, err := e.Search(ctx, q)
				if err != nil {
					t.Errorf("a broken reranker made the search fail: %v", err)
				}
				return res
			})
			if res == nil {
				return
			}
			if !slices.Equal(hitIDs(res), hitIDs(base)) {
				t.Fatalf("result %v, want the fused order %v", hitIDs(res), hitIDs(base))
			}
			rec.wait(t, "WARN", "reranker failed", tc.note)
		})
	}
}

package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	_ "github.com/memos-go/memos/backends/postgres" // compiled in, as in cmd/memos
	"github.com/memos-go/memos/core/bench"
	"github.com/memos-go/memos/core/provider/rerank/reranktest"
)

// TestBenchOutAndJSON checks that bench's report file is --out and that the
// global --json means what it means everywhere: print JSON, not the table.
func TestBenchOutAndJSON(t *testing.T) {
	e := newEnv(t)
	out := filepath.Join(t.TempDir(), "report.json")
	args := []string{"bench", "--backends", "sqlite", "--sizes", "200", "--queries", "5", "--warmup", "1", "--dir", t.TempDir()}

	table := e.ok(append(args, "--out", out)...)
	if strings.HasPrefix(strings.TrimSpace(table), "{") {
		t.Errorf("bench without --json printed JSON:\n%s", table)
	}
	var fromFile bench.Report
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("--out %s: %v", out, err)
	}
	if err := json.Unmarshal(data, &fromFile); err != nil || len(fromFile.Results) != 1 || fromFile.Results[0].Backend != "sqlite" {
		t.Errorf("--out file: %d results (%v), want one sqlite result", len(fromFile.Results), err)
	}

	var printed bench.Report
	e.json(&printed, args...)
	if len(printed.Results) != 1 || printed.Results[0].Backend != "sqlite" {
		t.Errorf("bench --json printed %d results, want one sqlite result", len(printed.Results))
	}
}

// TestBenchReranker: bench uses the configured reranker on every search and
// counts its calls; --reranker none measures without it; a reranker that
// does not answer fails the bench with where its settings come from.
func TestBenchReranker(t *testing.T) {
	srv := reranktest.NewTEI(func(string, string) float64 { return 1 })
	defer srv.Close()
	e := newEnv(t)
	e.writeConfig("reranker:\n  name: http\n  http:\n    base_url: " + srv.URL + "\n")
	args := []string{"bench", "--backends", "sqlite", "--sizes", "200", "--queries", "5", "--warmup", "1", "--dir", t.TempDir()}

	var rep bench.Report
	e.json(&rep, args...)
	if rep.Settings.Reranker != "http" || len(rep.Results) != 1 || rep.Results[0].Rerank == nil ||
		rep.Results[0].Rerank.Calls == 0 || rep.Results[0].Rerank.Failed != 0 || srv.Calls() != rep.Results[0].Rerank.Calls+1 {
		t.Fatalf("reranker %q, results %d, counts %+v, server calls %d", rep.Settings.Reranker, len(rep.Results), rep.Results[0].Rerank, srv.Calls())
	}
	if out := e.ok(args...); !strings.Contains(out, "reranker http on every search") {
		t.Errorf("the table does not say a reranker ran:\n%s", out)
	}

	n := srv.Calls()
	var without bench.Report
	e.json(&without, append(args, "--reranker", "none")...)
	if without.Settings.Reranker != "" || without.Results[0].Rerank != nil || srv.Calls() != n {
		t.Errorf("--reranker none: reranker %q, counts %+v, %d more calls", without.Settings.Reranker, without.Results[0].Rerank, srv.Calls()-n)
	}

	srv.Close()
	r := e.run(args...)
	if r.code == 0 || !strings.Contains(r.stderr, "first call") || !strings.Contains(r.stderr, "MEMOS_RERANKER__HTTP__") {
		t.Errorf("reranker down: exit %d, stderr %s", r.code, r.stderr)
	}
	if r := e.run(append(args, "--reranker", "nope")...); r.code == 0 || !strings.Contains(r.stderr, "nope") {
		t.Errorf("--reranker nope: exit %d, stderr %s", r.code, r.stderr)
	}
}

// TestBenchServerBackends: with postgres compiled in but not configured, a
// plain memos bench skips it with a note and succeeds; named with
// --backends, or configured, it is run, and its failure fails the bench.
func TestBenchServerBackends(t *testing.T) {
	e := newEnv(t)
	args := []string{"bench", "--sizes", "200", "--queries", "5", "--warmup", "1", "--dir", t.TempDir()}

	var rep bench.Report
	e.json(&rep, args...)
	if slices.Contains(rep.Settings.Backends, "postgres") || len(rep.Results) == 0 || len(rep.Failures) != 0 ||
		len(rep.Notes) == 0 || !strings.Contains(rep.Notes[0], "skipped backend postgres") {
		t.Errorf("bench without --backends: backends %v, %d results, failures %+v, notes %q", rep.Settings.Backends, len(rep.Results), rep.Failures, rep.Notes)
	}
	if out := e.ok(args...); !strings.Contains(out, "note: skipped backend postgres") || !strings.Contains(out, "backends.postgres") {
		t.Errorf("the table does not say postgres was skipped and how to configure it:\n%s", out)
	}

	// Nothing listens on port 1: a postgres the user asked for fails.
	const dsn = "postgres://memos@127.0.0.1:1/memos?connect_timeout=5"
	if r := e.run(append(args, "--backends", "sqlite,postgres", "--postgres-dsn", dsn)...); r.code == 0 || !strings.Contains(r.stdout, "FAILED") || !strings.Contains(r.stderr, "postgres") {
		t.Errorf("--backends sqlite,postgres with no server: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	if r := e.with("MEMOS_BACKENDS__POSTGRES__DSN=" + dsn).run(args...); r.code == 0 || !strings.Contains(r.stderr, "postgres") {
		t.Errorf("configured postgres with no server: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
}

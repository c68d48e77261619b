package clients_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memos-go/memos/api"
	"github.com/memos-go/memos/api/server"
	"github.com/memos-go/memos/backends/sqlite"
	"github.com/memos-go/memos/core"
	_ "github.com/memos-go/memos/core/vector"
	"github.com/memos-go/memos/embedders/hash"
)

const (
	adminToken  = "clients-test-admin-token-0123456789"
	scopedToken = "clients-test-scoped-token-0123456789"
	scopedNS    = "project:scoped"
)

// tool finds a program the tests need: missing, the test skips, and fails
// under CI=true, where .ci/run has installed it.
func tool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		msg := fmt.Sprintf("the client tests need %s on PATH: %v", name, err)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return p
}

// serve starts memos' HTTP server on a loopback listener over a new SQLite
// store, with an admin token and a token limited to scopedNS, and returns
// its URL.
func serve(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	b, err := sqlite.Open(ctx, sqlite.Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	emb, err := hash.Open(ctx, hash.Config{})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := core.Open(ctx, core.Options{Backend: b, Embedder: emb, VectorSnapshot: path + ".vectors"})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(eng, server.Options{
		Addr:      "127.0.0.1:0",
		StorePath: path,
		Version:   "clients-test",
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
		Tokens: []server.Token{
			{Name: "admin", Token: adminToken},
			{Name: "scoped", Token: scopedToken, Namespaces: []string{scopedNS}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(sctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
		eng.Close()
	})
	return "http://" + ln.Addr().String()
}

// report is what a client's test script prints last.
type report struct {
	OK     bool     `json:"ok"`
	Called []string `json:"called"`
}

// run runs a client's test script against url in namespace ns and returns
// the operations it called.
func run(t *testing.T, url, ns string, argv ...string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "MEMOS_URL="+url, "MEMOS_ADMIN_TOKEN="+adminToken, "MEMOS_SCOPED_TOKEN="+scopedToken,
		"MEMOS_SCOPED_NAMESPACE="+scopedNS, "MEMOS_TEST_NAMESPACE="+ns, "PYTHONDONTWRITEBYTECODE=1")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var rep report
	if jerr := json.Unmarshal([]byte(lines[len(lines)-1]), &rep); err != nil || jerr != nil || !rep.OK {
		t.Fatalf("%s: %v\nstdout: %s\nstderr: %s", strings.Join(argv, " "), err, out.String(), errb.String())
	}
	return rep.Called
}

// checkCalled fails for each operation of the table the script did not call.
func checkCalled(t *testing.T, client string, called []string) {
	t.Helper()
	var missing []string
	for _, o := range api.Ops() {
		if !slices.Contains(called, o.Name) {
			missing = append(missing, o.Name)
		}
	}
	if len(missing) > 0 {
		t.Errorf("the %s client's test calls no %s: exercise every operation against the server (%d of %d called)",
			client, strings.Join(missing, ", "), len(api.Ops())-len(missing), len(api.Ops()))
	}
	t.Logf("%s: the %d operations of the table called: %s", client, len(api.Ops()), strings.Join(called, " "))
}

// TestClients runs the TypeScript and the Python client's test scripts
// (typescript/test/live.mjs, python/tests/live_test.py) against a server
// on a real loopback listener: each calls every operation and checks its
// answer, and provokes the errors a client meets (not_found, invalid,
// forbidden with a scoped token, unauthorized, unreachable, timeout).
// The test fails when a script leaves an operation of the table uncalled.
func TestClients(t *testing.T) {
	t.Parallel()
	url := serve(t)
	t.Run("typescript", func(t *testing.T) {
		node := tool(t, "node")
		checkCalled(t, "TypeScript", run(t, url, "project:ts", node, filepath.Join("typescript", "test", "live.mjs")))
	})
	t.Run("python", func(t *testing.T) {
		py := tool(t, "python3")
		checkCalled(t, "Python", run(t, url, "project:py", py, filepath.Join("python", "tests", "live_test.py")))
	})
	t.Run("python-3.9-syntax", func(t *testing.T) {
		py := tool(t, "python3")
		out, err := exec.Command(py, filepath.Join("python", "tests", "check_py39.py")).CombinedOutput()
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
	})
}

// TestTypeScriptTypes type-checks the TypeScript client's declarations
// and its tests (typescript/test/types.ts holds calls the declarations
// must reject) with the TypeScript compiler that `npm ci` installs in
// api/clients/typescript (.ci/run does).
func TestTypeScriptTypes(t *testing.T) {
	t.Parallel()
	node := tool(t, "node")
	tsc := filepath.Join("typescript", "node_modules", "typescript", "bin", "tsc")
	if _, err := os.Stat(tsc); err != nil {
		msg := fmt.Sprintf("the TypeScript type check needs `npm ci` in api/clients/typescript: %v", err)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	out, err := exec.Command(node, tsc, "-p", "typescript").CombinedOutput()
	if err != nil {
		t.Fatalf("tsc: %v\n%s", err, out)
	}
}

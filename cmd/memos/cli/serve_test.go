package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/memos-go/memos/core"
)

// served is a `memos serve` child process.
type served struct {
	cmd    *exec.Cmd
	url    string
	mu     sync.Mutex
	stderr bytes.Buffer
	exited chan error
}

// log returns what the server wrote to stderr so far.
func (s *served) log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stderr.String()
}

var listenRE = regexp.MustCompile(`url=(http://127\.0\.0\.1:\d+)`)

// serve starts the memos binary's serve command on a free loopback port and
// waits until it listens.
func serve(t *testing.T, bin string, environ []string, args ...string) *served {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = environ
	pr, pw := io.Pipe()
	s := &served{cmd: cmd, exited: make(chan error, 1)}
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			s.mu.Lock()
			s.stderr.WriteString(sc.Text() + "\n")
			s.mu.Unlock()
			if m := listenRE.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
	}()
	go func() { s.exited <- cmd.Wait(); pw.Close() }()
	t.Cleanup(func() { cmd.Process.Kill() })
	select {
	case s.url = <-found:
	case err := <-s.exited:
		t.Fatalf("memos serve exited: %v\n%s", err, s.log())
	case <-time.After(2 * time.Minute):
		t.Fatalf("memos serve did not listen within 2 minutes\n%s", s.log())
	}
	return s
}

// terminate sends SIGTERM and waits for a clean exit.
func (s *served) terminate(t *testing.T) {
	t.Helper()
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.exited:
		if err != nil {
			t.Fatalf("memos serve after SIGTERM: %v\n%s", err, s.log())
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("memos serve did not stop within 2 minutes of SIGTERM\n%s", s.log())
	}
}

func binEnv(t *testing.T) []string {
	return []string{"HOME=" + t.TempDir(), "MEMOS_HOME=" + filepath.Join(t.TempDir(), "home"), "PATH=" + os.Getenv("PATH"), "GORACE=atexit_sleep_ms=0"}
}

func runMemos(t *testing.T, bin string, environ []string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = environ
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("memos %v: %v\n%s", args, err, errb.String())
	}
	return out
}

// TestServePackIsCLIPack checks that POST /api/mem/context-pack answers
// byte for byte what `memos pack --format json` prints for the same store,
// query and budget, for a query pack and a bootstrap pack.
func TestServePackIsCLIPack(t *testing.T) {
	bin := buildMemos(t)
	environ := binEnv(t)
	for _, c := range []string{"Alice lives in Lisbon since 2023", "Alice prefers open-source tools", "Bob lives in Porto"} {
		runMemos(t, bin, environ, "add", c, "--significance", "7")
	}
	s := serve(t, bin, environ)
	for _, c := range []struct {
		body string
		args []string
	}{
		{`{"query":"where does alice live","budget":400}`, []string{"pack", "where does alice live", "--budget", "400", "--format", "json"}},
		{`{"bootstrap":true,"budget":120}`, []string{"pack", "--bootstrap", "--budget", "120", "--format", "json"}},
	} {
		res, err := http.Post(s.url+"/api/mem/context-pack", "application/json", strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(res.Body)
		res.Body.Close()
		want := runMemos(t, bin, environ, c.args...)
		if res.StatusCode != 200 || !bytes.Equal(got, want) {
			t.Errorf("%s: HTTP %d answered\n%s\nmemos %v printed\n%s", c.body, res.StatusCode, got, c.args, want)
		}
	}
	s.terminate(t)
}

// The serve tests are not parallel: their load would starve the parallel
// tests that time their own processes (TestBinaryConcurrentWriters).

// TestServeSIGTERMUnderLoad sends SIGTERM to `memos serve` while clients
// write: it exits cleanly, and every write it acknowledged is in the store.
func TestServeSIGTERMUnderLoad(t *testing.T) {
	bin := buildMemos(t)
	environ := binEnv(t)
	s := serve(t, bin, environ)
	var (
		mu    sync.Mutex
		acked []int64
		wg    sync.WaitGroup
	)
	stop := make(chan struct{})
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				res, err := http.Post(s.url+"/api/mem/remember", "application/json",
					strings.NewReader(fmt.Sprintf(`{"content":"writer %d wrote note %d"}`, w, i)))
				if err != nil {
					return
				}
				var m core.Memory
				err = json.NewDecoder(res.Body).Decode(&m)
				res.Body.Close()
				if res.StatusCode == 200 && err == nil {
					mu.Lock()
					acked = append(acked, m.ID)
					mu.Unlock()
				}
			}
		})
	}
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if n >= 30 {
			break
		}
	}
	s.terminate(t)
	close(stop)
	wg.Wait()
	if !strings.Contains(s.log(), "store closed") {
		t.Errorf("serve did not report closing the store:\n%s", s.log())
	}
	if len(acked) < 30 {
		t.Fatalf("only %d writes acknowledged before SIGTERM", len(acked))
	}
	var st statsJSON
	if err := json.Unmarshal(runMemos(t, bin, environ, "stats", "--json"), &st); err != nil {
		t.Fatal(err)
	}
	if st.Memories < len(acked) {
		t.Errorf("the store holds %d memories, but %d writes were acknowledged", st.Memories, len(acked))
	}
	for _, id := range acked {
		runMemos(t, bin, environ, "get", fmt.Sprint(id), "--json")
	}
}

// TestMCPClient drives `memos mcp` (stdio) and `memos serve` (/mcp,
// streamable HTTP, with a token) with the official TypeScript MCP SDK
// (testdata/mcpclient/client.mjs): tool names and schemas, memory_store then
// memos_context_pack citing the stored memory, errors, the bootstrap prompt
// and resource. `npm ci` in that folder installs the SDK (.ci/run does);
// without it the test skips locally and fails in CI.
func TestMCPClient(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("testdata", "mcpclient"))
	if err != nil {
		t.Fatal(err)
	}
	node, err := exec.LookPath("node")
	if _, serr := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil || serr != nil {
		msg := fmt.Sprintf("the MCP client test needs node and the TypeScript MCP SDK: run `npm ci` in %s (node: %v, sdk: %v)", dir, err, serr)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	bin := buildMemos(t)
	runClient := func(t *testing.T, environ []string, args ...string) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, node, append([]string{filepath.Join(dir, "client.mjs")}, args...)...)
		cmd.Env = environ
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		var rep struct {
			OK    bool     `json:"ok"`
			Error string   `json:"error"`
			Tools []string `json:"tools"`
		}
		if jerr := json.Unmarshal(out.Bytes(), &rep); err != nil || jerr != nil || !rep.OK {
			t.Fatalf("MCP client %v: %v\nstdout: %s\nstderr: %s", args, err, out.String(), errb.String())
		}
		t.Logf("MCP client %s: %d tools: %s", args[0], len(rep.Tools), strings.Join(rep.Tools, ", "))
	}
	t.Run("stdio", func(t *testing.T) {
		runClient(t, binEnv(t), "stdio", bin)
	})
	t.Run("streamable-http", func(t *testing.T) {
		const token = "mcp-test-token-0123456789"
		environ := append(binEnv(t), "MEMOS_TOKEN="+token)
		s := serve(t, bin, environ)
		runClient(t, environ, "http", s.url+"/mcp", token)
		s.terminate(t)
	})
}

// TestServeConsoleSwitch checks server.console: memos serve serves the web
// console by default, and with server.console false answers 404 under
// /console/ while the API still answers.
func TestServeConsoleSwitch(t *testing.T) {
	bin := buildMemos(t)
	for _, c := range []struct {
		env    string
		status int
		body   string
	}{
		{"", 200, "<title>Browse"},
		{"MEMOS_SERVER__CONSOLE=false", 404, "server.console: false"},
	} {
		environ := binEnv(t)
		if c.env != "" {
			environ = append(environ, c.env)
		}
		s := serve(t, bin, environ)
		res, err := http.Get(s.url + "/console/")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != c.status || !strings.Contains(string(body), c.body) {
			t.Errorf("%q: GET /console/ answered %d\n%s\nwant %d with %q", c.env, res.StatusCode, body, c.status, c.body)
		}
		res, err = http.Post(s.url+"/api/mem/stats", "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Errorf("%q: the API answered %d", c.env, res.StatusCode)
		}
		s.terminate(t)
	}
}

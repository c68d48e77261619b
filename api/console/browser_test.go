package console_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/memos-go/memos/api/console"
	"github.com/memos-go/memos/api/server"
	"github.com/memos-go/memos/backends/bolt"
	"github.com/memos-go/memos/backends/sqlite"
	"github.com/memos-go/memos/core"
	_ "github.com/memos-go/memos/core/vector"
	"github.com/memos-go/memos/embedders/hash"
)

const (
	adminToken  = "admin-token-0123456789abcdef"
	scopedToken = "scoped-token-0123456789abcdef"
)

// openEngine opens a real SQLite store with the hash embedder.
func openEngine(t testing.TB, path string) *core.Engine {
	t.Helper()
	return openEngineOn(t, "sqlite", path)
}

// openEngineOn opens a real store of backend (sqlite, bolt) with the hash
// embedder.
func openEngineOn(t testing.TB, backend, path string) *core.Engine {
	t.Helper()
	ctx := context.Background()
	var b core.Backend
	var err error
	switch backend {
	case "sqlite":
		b, err = sqlite.Open(ctx, sqlite.Config{Path: path})
	case "bolt":
		b, err = bolt.Open(ctx, bolt.Config{Path: path})
	default:
		err = fmt.Errorf("no backend %s here", backend)
	}
	if err != nil {
		t.Fatal(err)
	}
	emb, err := hash.Open(ctx, hash.Config{})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := core.Open(ctx, core.Options{Backend: b, Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	return eng
}

// live is memos' real server on a loopback listener.
type live struct {
	url string
	eng *core.Engine
}

func serve(t testing.TB, eng *core.Engine, tokens []server.Token) *live {
	t.Helper()
	srv, err := server.New(eng, server.Options{Addr: "127.0.0.1:0", Tokens: tokens,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
		eng.Close()
	})
	return &live{url: "http://" + ln.Addr().String(), eng: eng}
}

// api calls an operation of the HTTP API with token and decodes its answer
// into out; it returns the status.
func (l *live) api(t testing.TB, token, op string, in any, out any) int {
	t.Helper()
	body, _ := json.Marshal(in)
	req, _ := http.NewRequest("POST", l.url+"/api/mem/"+op, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode == 200 {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: %v: %s", op, err, b)
		}
	}
	return resp.StatusCode
}

func (l *live) remember(t testing.TB, in map[string]any) *core.Memory {
	t.Helper()
	var m core.Memory
	if st := l.api(t, adminToken, "remember", in, &m); st != 200 {
		t.Fatalf("remember %v: status %d", in, st)
	}
	return &m
}

// browser starts Debian's chromium headless, or skips the test when it is
// missing (CI=true fails instead).
func browser(t *testing.T) context.Context {
	t.Helper()
	var path string
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("no chromium on PATH; CI installs it (apt-get install -y chromium in .ci/run)")
		}
		t.Skip("no chromium on PATH (apt-get install -y chromium)")
	}
	actx, cancel := chromedp.NewExecAllocator(context.Background(), chromedp.ExecPath(path),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1280, 900))
	t.Cleanup(cancel)
	ctx, cancel2 := chromedp.NewContext(actx)
	t.Cleanup(cancel2)
	ctx, cancel3 := context.WithTimeout(ctx, 8*time.Minute)
	t.Cleanup(cancel3)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// artifacts is where screenshots go: $MEMOS_TEST_ARTIFACTS, else a
// temporary directory.
func artifacts(t *testing.T) string {
	dir := os.Getenv("MEMOS_TEST_ARTIFACTS")
	if dir == "" {
		return t.TempDir()
	}
	dir = filepath.Join(dir, "console")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// shoot writes a full-page screenshot of the current page at a laptop and
// a phone width.
func shoot(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	for _, w := range []struct {
		label  string
		width  int64
		height int64
	}{{"laptop", 1280, 800}, {"phone", 390, 844}} {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(w.width, w.height)); err != nil {
			t.Fatal(err)
		}
		// Readable at this width: nothing makes the page scroll sideways.
		wide, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("document.documentElement.scrollWidth > document.documentElement.clientWidth"))
		if err != nil || wide {
			t.Errorf("%s at %d px: the page is wider than the screen (%v)", name, w.width, err)
		}
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+"-"+w.label+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800)); err != nil {
		t.Fatal(err)
	}
}

// darkMode makes the page's prefers-color-scheme dark (or back to light).
func darkMode(on bool) chromedp.Action[chromedp.Void] {
	scheme := "light"
	if on {
		scheme = "dark"
	}
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}})
		return err
	})
}

func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	// A node found just before the browser replaces the document (a form's
	// navigation still settling) is gone by the time its text is asked
	// for: ask again, a few times, for the node the new document has.
	var err error
	for range 5 {
		var s string
		tctx, cancel := context.WithTimeout(ctx, stepWait) // a missing node fails soon
		s, err = chromedp.Run(tctx, chromedp.Text(chromedp.CSS(sel)))
		cancel()
		if err == nil {
			return s
		}
		if !strings.Contains(err.Error(), "No node with given id") {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("text of %s: %v", sel, err)
	return ""
}

// stepWait bounds the wait for one element, so that a page without it
// fails the test soon, naming it, rather than at the test's deadline.
const stepWait = 90 * time.Second

// visible waits until the element sel (CSS) is visible.
func visible(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		wctx, cancel := context.WithTimeout(ctx, stepWait)
		defer cancel()
		if _, err := chromedp.WaitVisible(chromedp.CSS(sel))(wctx, t); err != nil {
			return fmt.Errorf("no visible %s after %v: %w", sel, stepWait, err)
		}
		return nil
	})
}

// flash waits until the page's flash message reads want: the page a form
// posted to has loaded (the page before may show another flash, and a
// click returns before the post's answer, so waiting for any .flash could
// act on the page being replaced).
func flash(want string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		wctx, cancel := context.WithTimeout(ctx, stepWait)
		defer cancel()
		var got string
		for {
			// Evaluated in whichever document is current: no node is held
			// across the navigation.
			s, err := chromedp.Evaluate[string]("((document.querySelector('.flash') || {}).textContent || '').trim()")(wctx, t)
			if err == nil {
				if got = s; got == want {
					return nil
				}
			}
			select {
			case <-wctx.Done():
				return fmt.Errorf("no flash %q after %v (last %q)", want, stepWait, got)
			case <-time.After(50 * time.Millisecond):
			}
		}
	})
}

// follow opens the address of the link sel (CSS) and waits for the
// element then (CSS) of the page it leads to. Navigating, unlike a click,
// returns once the new page has loaded, so that then is not found on the
// page before.
func follow(t *testing.T, ctx context.Context, what, sel, then string) {
	t.Helper()
	href, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf("(document.querySelector(%q) || {}).href || ''", sel)))
	if err != nil || href == "" {
		html, _ := chromedp.Run(ctx, chromedp.OuterHTML(chromedp.CSS("main")))
		t.Fatalf("%s: no link %s (%v)\npage: %s", what, sel, err, html)
	}
	do(t, ctx, what, chromedp.Navigate(href), visible(then))
}

// do runs steps, failing the test with what and the page when one fails
// or they take more than 2×stepWait (a Click on a missing element waits as
// long as the context lasts). The tab of ctx must have run once (browser
// does it): a timeout on its first run would close it.
func do(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	dctx, cancel := context.WithTimeout(ctx, 2*stepWait)
	defer cancel()
	if err := chromedp.Do(dctx, steps...); err != nil {
		html, _ := chromedp.Run(ctx, chromedp.OuterHTML(chromedp.CSS("main")))
		t.Fatalf("%s: %v\npage: %s", what, err, html)
	}
}

// TestConsoleInBrowser drives the console in headless chromium against the
// real server on a real SQLite store: sign-in, browse's pages, search with
// explain, a memory's diff and revert, the review queue's pages, release
// and reject (checked through the API and the audit log), a batched
// memory's audit entries, recent activity and its pages, a scoped token's
// view, a stored script that must not run, and the CSP header.
func TestConsoleInBrowser(t *testing.T) {
	ctx := browser(t)
	dir := artifacts(t)
	l := serve(t, openEngine(t, filepath.Join(t.TempDir(), "memory.db")), []server.Token{
		{Name: "admin", Token: adminToken},
		{Name: "scoped", Token: scopedToken, Namespaces: []string{"project:b"}},
	})
	const ns = "project:a"
	m := l.remember(t, map[string]any{"namespace": ns, "content": "Alice prefers open-source tools for her editor", "entities": []string{"Alice"}})
	var m2 core.Memory
	if st := l.api(t, adminToken, "update", map[string]any{"namespace": ns, "id": m.ID, "content": "Alice prefers free software tools for her editor"}, &m2); st != 200 || m2.Version != 2 {
		t.Fatalf("update: %d %+v", st, m2)
	}
	const script = `Alice's note <script>window.__pwned=1</script><img src=x onerror="window.__pwned=2"> ends here`
	xss := l.remember(t, map[string]any{"namespace": ns, "content": script})
	rel := l.remember(t, map[string]any{"namespace": ns, "content": "Alice moved to Lisbon in May", "quarantine": true, "trust": "imported"})
	rej := l.remember(t, map[string]any{"namespace": ns, "content": "Alice's password is hunter2", "quarantine": true})
	contra := l.remember(t, map[string]any{"namespace": ns, "content": "Alice prefers proprietary tools for her editor", "quarantine": true, "contradicts": []int64{m.ID}})
	var lesson core.Lesson
	if st := l.api(t, adminToken, "learn", map[string]any{"namespace": ns, "guidance": "run the tests before pushing", "when": "before a release"}, &lesson); st != 200 {
		t.Fatalf("learn: %d", st)
	}
	secret := l.remember(t, map[string]any{"namespace": ns, "content": "zebra plan for Alice's birthday"})
	bob := l.remember(t, map[string]any{"namespace": "project:b", "content": "Bob keeps the zebra logs"})
	for i := 0; i < 3; i++ {
		l.remember(t, map[string]any{"namespace": ns, "content": fmt.Sprintf("Alice reviewed pull request %d on the editor", 40+i), "significance": 3 + i})
	}
	// A batch (one audit entry binds its six memories), and enough single
	// writes that recent activity has an older page.
	var batched struct {
		Memories []core.Memory `json:"memories"`
	}
	items := make([]map[string]any, 6)
	for i := range items {
		items[i] = map[string]any{"content": fmt.Sprintf("Alice's batched note %d", i)}
	}
	if st := l.api(t, adminToken, "remember-batch", map[string]any{"namespace": ns, "memories": items}, &batched); st != 200 || len(batched.Memories) != 6 {
		t.Fatalf("remember-batch: %d, %d memories", st, len(batched.Memories))
	}
	batch := batched.Memories
	for i := 0; i < 6; i++ {
		l.remember(t, map[string]any{"namespace": ns, "content": fmt.Sprintf("Alice read chapter %d", i+1)})
	}

	// The CSP header is on every console answer.
	resp, err := http.Get(l.url + console.Prefix + "login")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("Content-Security-Policy"); got != console.CSP || !strings.Contains(got, "script-src 'self'") {
		t.Fatalf("Content-Security-Policy = %q", got)
	}

	// Sign in with a token.
	do(t, ctx, "sign in",
		chromedp.Navigate(l.url+"/console/?ns="+ns),
		visible("#token"),
		chromedp.SendKeys(chromedp.ID("token"), adminToken),
		chromedp.Submit(chromedp.ID("token")),
		visible("#memories"))
	do(t, ctx, "facets", chromedp.Click(chromedp.ID("facets")), visible("details.facets[open]"))
	if got := text(t, ctx, "details.facets"); !strings.Contains(got, "quarantined 3") {
		t.Errorf("facet counts:\n%s", got)
	}
	shoot(t, ctx, dir, "browse")
	if got := text(t, ctx, "#memories"); !strings.Contains(got, "free software") || strings.Contains(got, "hunter2") {
		t.Errorf("browse lists:\n%s", got)
	}
	cookies, err := chromedp.Run(ctx, chromedp.Evaluate[string]("document.cookie"))
	if err != nil || cookies != "" {
		t.Errorf("the session cookie is readable by scripts: %q, %v", cookies, err)
	}

	// Paging two at a time: forward twice, then back to each page before.
	pages := make([]string, 3)
	do(t, ctx, "page 1", chromedp.Navigate(l.url+"/console/?ns="+ns+"&limit=2"), visible("#memories"))
	pages[0] = text(t, ctx, "#memories")
	for i := 1; i < 3; i++ {
		do(t, ctx, fmt.Sprintf("page %d", i+1), chromedp.Click(chromedp.ID("next-page")), visible("#prev-page"))
		if pages[i] = text(t, ctx, "#memories"); pages[i] == pages[i-1] {
			t.Errorf("page %d lists what page %d listed:\n%s", i+1, i, pages[i])
		}
	}
	shoot(t, ctx, dir, "browse-page-3")
	do(t, ctx, "back to page 2", chromedp.Click(chromedp.ID("prev-page")), visible("#memories"))
	if got := text(t, ctx, "#memories"); got != pages[1] {
		t.Errorf("back from page 3 lists\n%s\nwant page 2's\n%s", got, pages[1])
	}
	do(t, ctx, "back to page 1", chromedp.Click(chromedp.ID("prev-page")), visible("#next-page"))
	if got := text(t, ctx, "#memories"); got != pages[0] {
		t.Errorf("back from page 2 lists\n%s\nwant page 1's\n%s", got, pages[0])
	}
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int]("document.querySelectorAll('#prev-page, #first-page').length")); err != nil || n != 0 {
		t.Errorf("page 1 links to a page before it (%d links, %v)", n, err)
	}

	// Keyboard: j selects the first memory, Enter opens it.
	do(t, ctx, "keyboard", chromedp.KeyEvent("j"), chromedp.KeyEvent("\r"), visible("#memory-content"))

	// Search and open the explain of the first hit.
	do(t, ctx, "search",
		chromedp.Navigate(l.url+"/console/search?ns="+ns+"&q=alice+editor+tools"),
		visible("#hits"),
		chromedp.Click(chromedp.CSS("#hits details.explain summary")),
		visible("#hits details.explain[open] table"))
	if got := text(t, ctx, "#hits details.explain[open] table"); !strings.Contains(got, "fused (RRF)") || !strings.Contains(got, "gate") {
		t.Errorf("explain table:\n%s", got)
	}
	if got := text(t, ctx, "#rewritten"); !strings.Contains(got, "keyword query as run") {
		t.Errorf("the query as rewritten is missing: %q", got)
	}
	shoot(t, ctx, dir, "search")
	do(t, ctx, "dark", darkMode(true))
	shoot(t, ctx, dir, "search-dark")
	do(t, ctx, "light", darkMode(false))
	// A keyword query with an FTS5 syntax error is shown in place.
	do(t, ctx, "fts error", chromedp.Navigate(l.url+"/console/search?ns="+ns+"&mode=fts&q=%22alice"), visible("#error"))
	if got := text(t, ctx, "#error"); !strings.Contains(got, "quote") {
		t.Errorf("fts syntax error: %q", got)
	}

	// A stored script renders as text and never runs.
	do(t, ctx, "xss memory", chromedp.Navigate(fmt.Sprintf("%s/console/memory/%d?ns=%s", l.url, xss.ID, ns)),
		visible("#memory-content"), chromedp.Sleep(300*time.Millisecond))
	if got := text(t, ctx, "#memory-content"); got != script {
		t.Errorf("memory text shown as %q, want %q", got, script)
	}
	pwned, err := chromedp.Run(ctx, chromedp.Evaluate[string]("typeof window.__pwned"))
	if err != nil || pwned != "undefined" {
		t.Errorf("the stored script ran: window.__pwned is %q (%v)", pwned, err)
	}

	// A memory: diff version 1 with 2, then revert to 1.
	do(t, ctx, "memory page",
		chromedp.Navigate(fmt.Sprintf("%s/console/memory/%d?ns=%s", l.url, m.ID, ns)),
		visible("#diff-form"),
		chromedp.SetValue(chromedp.ID("diff-a"), "1"),
		chromedp.SetValue(chromedp.ID("diff-b"), "2"),
		chromedp.Click(chromedp.ID("diff-go")),
		visible("#diff del"))
	if del, ins := text(t, ctx, "#diff del"), text(t, ctx, "#diff ins"); !strings.Contains(del, "open-source") || !strings.Contains(ins, "free software") {
		t.Errorf("diff: removed %q, added %q", del, ins)
	}
	shoot(t, ctx, dir, "memory")
	do(t, ctx, "revert",
		chromedp.Click(chromedp.CSS(`button.revert[aria-label="Revert to version 1"]`)),
		visible(".flash"))
	var cur core.Memory
	if st := l.api(t, adminToken, "get", map[string]any{"namespace": ns, "id": m.ID}, &cur); st != 200 || cur.Version != 3 || cur.Content != m.Content {
		t.Fatalf("after revert: status %d, v%d %q", st, cur.Version, cur.Content)
	}

	// The review queue one memory a page: forward to the last, and back.
	do(t, ctx, "review page 1", chromedp.Navigate(l.url+"/console/review?ns="+ns+"&limit=1"), visible("#queue"))
	queue := []string{text(t, ctx, "#queue")}
	for i := 1; i < 3; i++ {
		follow(t, ctx, fmt.Sprintf("review page %d", i+1), "#review-next", "#queue")
		queue = append(queue, text(t, ctx, "#queue"))
	}
	words := []string{"Lisbon", "hunter2", "proprietary"}
	for i, page := range queue {
		for j, w := range words {
			if strings.Contains(page, w) != (i == j) {
				t.Errorf("review page %d lists\n%s\nwant the memory with %q alone", i+1, page, words[i])
			}
		}
	}
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int]("document.querySelectorAll('#review-next').length")); err != nil || n != 0 {
		t.Errorf("the last page of the review queue links to a next one (%d links, %v)", n, err)
	}
	shoot(t, ctx, dir, "review-page-3")
	for i := 1; i >= 0; i-- {
		follow(t, ctx, fmt.Sprintf("review back to page %d", i+1), "#review-prev", "#queue")
		if got := text(t, ctx, "#queue"); got != queue[i] {
			t.Errorf("back to review page %d lists\n%s\nwant\n%s", i+1, got, queue[i])
		}
	}

	// The review queue: release one (as certain), reject another.
	do(t, ctx, "review", chromedp.Navigate(l.url+"/console/review?ns="+ns), visible("#queue"))
	if got := text(t, ctx, "#queue"); !strings.Contains(got, "Lisbon") || !strings.Contains(got, "hunter2") {
		t.Errorf("queue:\n%s", got)
	}
	if got := text(t, ctx, fmt.Sprintf("#item-%d .pair", contra.ID)); !strings.Contains(got, fmt.Sprintf("Contradicts #%d", m.ID)) || !strings.Contains(got, "open-source tools") {
		t.Errorf("the contradiction is not shown side by side: %q", got)
	}
	shoot(t, ctx, dir, "review")
	do(t, ctx, "release",
		chromedp.SetValue(chromedp.ID(fmt.Sprintf("trust-%d", rel.ID)), "certain"),
		chromedp.SendKeys(chromedp.ID(fmt.Sprintf("note-%d", rel.ID)), "checked with Alice"),
		chromedp.Click(chromedp.ID(fmt.Sprintf("release-%d", rel.ID))),
		flash(fmt.Sprintf("Done: released %d.", rel.ID)))
	do(t, ctx, "reject",
		chromedp.SendKeys(chromedp.ID(fmt.Sprintf("reason-%d", rej.ID)), "a secret"),
		chromedp.Click(chromedp.ID(fmt.Sprintf("reject-%d", rej.ID))),
		flash(fmt.Sprintf("Done: rejected %d.", rej.ID)))
	// Several at once: tick the last one and reject the ticked.
	do(t, ctx, "reject ticked",
		chromedp.Click(chromedp.CSS(fmt.Sprintf(`#item-%d input[type=checkbox]`, contra.ID))),
		chromedp.Click(chromedp.CSS(`.bulk button[value=reject]`)),
		visible("#empty-queue"))
	if st := l.api(t, adminToken, "get", map[string]any{"namespace": ns, "id": contra.ID}, nil); st != 404 {
		t.Errorf("memory rejected with the ticked ones: get answered %d, want 404", st)
	}
	var got core.Memory
	if st := l.api(t, adminToken, "get", map[string]any{"namespace": ns, "id": rel.ID}, &got); st != 200 ||
		got.Status != core.StatusActive || got.Trust.Level != core.TrustCertain {
		t.Errorf("released memory: status %d, %s, trust %s", st, got.Status, got.Trust.Level)
	}
	if st := l.api(t, adminToken, "get", map[string]any{"namespace": ns, "id": rej.ID}, nil); st != 404 {
		t.Errorf("rejected memory: get answered %d, want 404", st)
	}
	var rep core.AuditReport
	if st := l.api(t, adminToken, "audit-verify", map[string]any{}, &rep); st != 200 || rep.Broken != 0 {
		t.Errorf("audit-verify: %d %+v", st, rep)
	}
	var log struct {
		Entries []core.AuditEntry `json:"entries"`
	}
	if st := l.api(t, adminToken, "audit", map[string]any{"action": "quarantine."}, &log); st != 200 {
		t.Fatalf("audit: %d", st)
	}
	var released, rejected bool
	for _, a := range log.Entries {
		released = released || (a.Action == "quarantine.release" && a.MemoryID == rel.ID &&
			strings.Contains(a.Detail, "token admin") && strings.Contains(a.Detail, "checked with Alice"))
		rejected = rejected || (a.Action == "quarantine.reject" && a.MemoryID == rej.ID &&
			strings.Contains(a.Detail, "token admin") && strings.Contains(a.Detail, "a secret"))
	}
	if !released || !rejected {
		t.Errorf("audit entries lack a decision (released %v, rejected %v): %+v", released, rejected, log.Entries)
	}
	// The released memory's page lists its audit entries, with who
	// released it.
	do(t, ctx, "released memory", chromedp.Navigate(fmt.Sprintf("%s/console/memory/%d?ns=%s", l.url, rel.ID, ns)),
		visible("#audit"))
	if got := text(t, ctx, "#audit"); !strings.Contains(got, "remember") || !strings.Contains(got, "quarantine.release") ||
		!strings.Contains(got, "console, token admin") || !strings.Contains(got, "checked with Alice") {
		t.Errorf("the released memory's audit entries:\n%s", got)
	}
	if got := text(t, ctx, "#audit tbody tr:last-child .actor"); got != "console, token admin" {
		t.Errorf("who released it: %q", got)
	}
	shoot(t, ctx, dir, "memory-audit")
	// A batched memory's page lists the batch's entry, as its own.
	do(t, ctx, "batched memory", chromedp.Navigate(fmt.Sprintf("%s/console/memory/%d?ns=%s", l.url, batch[3].ID, ns)),
		visible("#audit"))
	if got := text(t, ctx, "#audit"); !strings.Contains(got, "one of 6") {
		t.Errorf("the batched memory's audit entries:\n%s", got)
	}

	// Health, with the audit log verified on demand.
	do(t, ctx, "health", chromedp.Navigate(l.url+"/console/health?ns="+ns),
		chromedp.Click(chromedp.ID("verify")), visible("#audit .ok"))
	do(t, ctx, "consolidation dry run", chromedp.Click(chromedp.ID("dry-run")), visible("#consolidation"))
	shoot(t, ctx, dir, "health")
	// Recent activity: the latest decisions first, with who made them and
	// links to the memories; an older page, and back.
	do(t, ctx, "recent activity", chromedp.Navigate(l.url+"/console/health?ns="+ns), visible("#activity"))
	latest := text(t, ctx, "#activity")
	if got := text(t, ctx, "#activity tbody tr:first-child"); !strings.Contains(got, "quarantine.reject") ||
		!strings.Contains(got, fmt.Sprintf("#%d", contra.ID)) || !strings.Contains(got, "console, token admin") {
		t.Errorf("the latest activity is not the last rejection, by the admin token: %q", got)
	}
	if !strings.Contains(latest, "quarantine.release") || !strings.Contains(latest, "and 1 more") {
		t.Errorf("recent activity lacks the release or the batch:\n%s", latest)
	}
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int]("document.querySelectorAll('#activity tbody tr').length")); err != nil || n != 20 {
		t.Errorf("recent activity shows %d entries (%v), want a page of 20", n, err)
	}
	follow(t, ctx, "older activity", "#activity-older", "#activity-latest")
	if got := text(t, ctx, "#activity"); got == latest || strings.Contains(got, "quarantine.") || !strings.Contains(got, "remember") {
		t.Errorf("older activity:\n%s", got)
	}
	shoot(t, ctx, dir, "health-older-activity")
	follow(t, ctx, "newer activity", "#activity-newer", "#activity")
	if got := text(t, ctx, "#activity"); got != latest {
		t.Errorf("newer than the older page:\n%s\nwant the latest:\n%s", got, latest)
	}
	// Lessons: record an outcome.
	do(t, ctx, "lessons", chromedp.Navigate(l.url+"/console/lessons?ns="+ns),
		chromedp.Click(chromedp.CSS(`button[name=success][value=true]`)), visible(".flash"))
	var ls struct {
		Lessons []core.Lesson `json:"lessons"`
	}
	if st := l.api(t, adminToken, "lessons", map[string]any{"namespace": ns}, &ls); st != 200 || len(ls.Lessons) != 1 || ls.Lessons[0].Successes != 1 {
		t.Errorf("lessons after an outcome: %d %+v", st, ls.Lessons)
	}
	do(t, ctx, "pack", chromedp.Navigate(l.url+"/console/pack?ns="+ns+"&q=alice+editor"), visible("#pack-tokens"))
	shoot(t, ctx, dir, "pack")

	// A scoped token, in a browser context of its own (no shared cookies),
	// sees its namespace and default, never project:a.
	sctx, cancel := chromedp.NewContext(ctx, chromedp.WithNewBrowserContext())
	defer cancel()
	if err := chromedp.Do(sctx); err != nil { // opens the tab, without do's timeout
		t.Fatal(err)
	}
	do(t, sctx, "scoped sign in",
		chromedp.Navigate(l.url+"/console/"),
		visible("#token"),
		chromedp.SendKeys(chromedp.ID("token"), scopedToken),
		chromedp.Submit(chromedp.ID("token")),
		visible("#memories"))
	if got := text(t, sctx, "#memories"); !strings.Contains(got, "Bob keeps the zebra logs") || strings.Contains(got, "Alice") {
		t.Errorf("scoped browse lists:\n%s", got)
	}
	// The audit log is the whole store's: not for a token limited to
	// namespaces.
	do(t, sctx, "scoped memory", chromedp.Navigate(fmt.Sprintf("%s/console/memory/%d", l.url, bob.ID)), visible("#audit-h"))
	if got := text(t, sctx, "main"); !strings.Contains(got, "limited to namespaces") {
		t.Errorf("scoped memory page:\n%s", got)
	}
	do(t, sctx, "scoped health", chromedp.Navigate(l.url+"/console/health"), visible("#activity-hidden"))
	if got := text(t, sctx, "main"); strings.Contains(got, "quarantine.") || strings.Contains(got, "Alice") {
		t.Errorf("scoped health shows the store's activity:\n%s", got)
	}
	do(t, sctx, "scoped search", chromedp.Navigate(l.url+"/console/search?q=zebra+plan"), visible("#hits"))
	if got := text(t, sctx, "main"); strings.Contains(got, "birthday") {
		t.Errorf("scoped search shows another namespace's memory:\n%s", got)
	}
	for _, u := range []string{
		"/console/?ns=" + ns,
		fmt.Sprintf("/console/memory/%d?ns=%s", secret.ID, ns),
		fmt.Sprintf("/console/memory/%d", secret.ID),
		"/console/review?ns=" + ns,
	} {
		do(t, sctx, "scoped "+u, chromedp.Navigate(l.url+u), visible("#error"))
		if got := text(t, sctx, "main"); strings.Contains(got, "birthday") || strings.Contains(got, "Lisbon") {
			t.Errorf("%s shows another namespace's memory:\n%s", u, got)
		}
	}
}

package console_test

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/memos-go/memos/api/server"
)

// client is a browser-like HTTP client: it keeps cookies and does not
// follow redirects, so a test sees each answer.
func client(t *testing.T) *http.Client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func get(t *testing.T, c *http.Client, u string, header ...string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", u, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return send(t, c, req)
}

func post(t *testing.T, c *http.Client, u string, form url.Values, header ...string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", u, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return send(t, c, req)
}

func send(t *testing.T, c *http.Client, req *http.Request) (*http.Response, string) {
	t.Helper()
	if req.Host == "" {
		req.Host = req.URL.Host
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

// TestConsoleSignInAndForgery checks the console's rules without a
// browser: sign-in with the server's tokens only, the session cookie's
// attributes, CSRF tokens and same-origin checks on every state change, the
// session not opening the API, sign-out, and a tokenless server answering
// only to loopback host names.
func TestConsoleSignInAndForgery(t *testing.T) {
	l := serve(t, openEngine(t, filepath.Join(t.TempDir(), "memory.db")), []server.Token{{Name: "admin", Token: adminToken}})
	q := l.remember(t, map[string]any{"content": "held for review", "quarantine": true})
	c := client(t)

	resp, _ := get(t, c, l.url+"/console/review")
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/console/login") {
		t.Fatalf("unsigned request: %d to %q, want a redirect to the sign-in", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, body := post(t, c, l.url+"/console/login", url.Values{"token": {"not-a-token-of-this-server"}})
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "not one of this server") {
		t.Fatalf("wrong token: %d %s", resp.StatusCode, body)
	}
	// A sign-in from another site is refused (login CSRF).
	resp, _ = post(t, c, l.url+"/console/login", url.Values{"token": {adminToken}}, "Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example")
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("cross-site sign-in: %d, want 403", resp.StatusCode)
	}
	resp, _ = post(t, c, l.url+"/console/login", url.Values{"token": {adminToken}, "next": {"/console/review"}})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/console/review" {
		t.Fatalf("sign-in: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	ck := resp.Cookies()
	if len(ck) != 1 || !ck[0].HttpOnly || ck[0].SameSite != http.SameSiteStrictMode || ck[0].Path != "/console/" || strings.Contains(ck[0].Value, adminToken) {
		t.Fatalf("session cookie: %+v", ck)
	}
	resp, body = get(t, c, l.url+"/console/review")
	m := csrfField.FindStringSubmatch(body)
	if resp.StatusCode != 200 || m == nil || !strings.Contains(body, "held for review") {
		t.Fatalf("review page: %d, csrf %v\n%s", resp.StatusCode, m, body)
	}
	decide := url.Values{"action": {"release"}, "id": {strconv.FormatInt(q.ID, 10)}}
	// Without the CSRF token, with a wrong one, or from another site: refused.
	for _, c2 := range []struct {
		name   string
		csrf   string
		header []string
	}{{"no token", "", nil}, {"wrong token", strings.Repeat("0", 64), nil},
		{"cross-site", m[1], []string{"Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example"}}} {
		f := url.Values{}
		for k, v := range decide {
			f[k] = v
		}
		f.Set("csrf", c2.csrf)
		resp, _ := post(t, c, l.url+"/console/review/decide", f, c2.header...)
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s: %d, want 403", c2.name, resp.StatusCode)
		}
	}
	var got struct {
		Status string `json:"status"`
	}
	if l.api(t, adminToken, "get", map[string]any{"id": q.ID}, &got); got.Status != "quarantined" {
		t.Fatalf("a refused form changed the memory: %s", got.Status)
	}
	// The session cookie does not open the API: it needs the bearer token.
	resp, _ = post(t, c, l.url+"/api/mem/review", url.Values{})
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("API with the console cookie: %d, want 401", resp.StatusCode)
	}
	// With the token it works; signing out ends the session.
	decide.Set("csrf", m[1])
	if resp, body := post(t, c, l.url+"/console/review/decide", decide); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("release: %d %s", resp.StatusCode, body)
	}
	if l.api(t, adminToken, "get", map[string]any{"id": q.ID}, &got); got.Status != "active" {
		t.Fatalf("after release: %s", got.Status)
	}
	if resp, _ := post(t, c, l.url+"/console/logout", url.Values{"csrf": {m[1]}}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign out: %d", resp.StatusCode)
	}
	if resp, _ := get(t, client(t), l.url+"/console/review"); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("after sign-out: %d", resp.StatusCode)
	}

	// The embedded assets are served (no listing), with the policy too.
	if resp, body := get(t, client(t), l.url+"/console/static/console.js"); resp.StatusCode != 200 || !strings.Contains(body, "keydown") ||
		resp.Header.Get("Content-Security-Policy") == "" {
		t.Errorf("console.js: %d, CSP %q", resp.StatusCode, resp.Header.Get("Content-Security-Policy"))
	}
	if resp, _ := get(t, client(t), l.url+"/console/static/"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("static directory: %d, want 404", resp.StatusCode)
	}

	// A server without tokens needs no sign-in but answers only to loopback
	// names (a DNS-rebinding page has a foreign Host).
	open := serve(t, openEngine(t, filepath.Join(t.TempDir(), "memory.db")), nil)
	if resp, body := get(t, client(t), open.url+"/console/"); resp.StatusCode != 200 || !strings.Contains(body, "Browse") {
		t.Fatalf("open console: %d", resp.StatusCode)
	}
	req, _ := http.NewRequest("GET", open.url+"/console/", nil)
	req.Host = "rebind.evil.example"
	if resp, _ := send(t, client(t), req); resp.StatusCode != http.StatusMisdirectedRequest {
		t.Fatalf("foreign Host on a tokenless server: %d, want 421", resp.StatusCode)
	}
}

// Package console is memos' web console: server-rendered pages under
// /console/ for a person to browse, search, explain, review and repair what
// an agent remembers. It is a front-end of the operation table like the
// HTTP API and MCP: every page and every action runs an api.Op through
// api.Service (the same decoding, namespace authorization and limited
// engine handle), never the engine directly.
//
// Pages are html/template (every value escaped; memory text is untrusted),
// styles and one small script are embedded, and every answer carries a
// strict Content-Security-Policy (no inline script or style). There is no
// JavaScript framework: each action is a plain form post answered with a
// redirect, so the console works without scripts; console.js only adds
// keyboard shortcuts.
//
// Sign-in follows the API: without configured tokens (a loopback server)
// nobody signs in; with tokens a person signs in with one of them and gets
// an HttpOnly, SameSite=Strict session cookie holding only a random session
// id. Every state change needs the session's CSRF token and a same-origin
// request.
package console

import (
	"bytes"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/memos-go/memos/api"
	"github.com/memos-go/memos/core"
)

// Prefix is where the console is mounted.
const Prefix = "/console/"

// SessionTTL is how long a sign-in lasts.
const SessionTTL = 12 * time.Hour

// maxSessions bounds the session table; the oldest go first beyond it.
const maxSessions = 10000

// CSP is the Content-Security-Policy of every console answer: only the
// console's own script, styles and forms, no framing.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Options configure a Console.
type Options struct {
	// Service runs the operations (shared with the HTTP API).
	Service *api.Service
	// Lookup returns what a token may reach, nil when it is no token of the
	// server. Nil Lookup means the server has no tokens: nobody signs in
	// and, as for the API, the server listens on loopback only.
	Lookup func(secret string) *api.Access
	// Logger receives sign-in failures (default slog.Default()).
	Logger *slog.Logger
}

// Console serves the pages. Create it with New.
type Console struct {
	opts   Options
	pages  map[string]*template.Template
	static http.Handler
	xorig  *http.CrossOriginProtection
	log    *slog.Logger

	mu       sync.Mutex
	sessions map[string]*session
}

// session is one browser's sign-in (or, on a server without tokens, its
// anonymous visit: the CSRF token needs a session either way).
type session struct {
	acc     *api.Access
	csrf    string
	expires time.Time
	flash   string
}

// New returns a console over opts.Service.
func New(opts Options) (*Console, error) {
	if opts.Service == nil {
		return nil, errors.New("console: no service")
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	c := &Console{opts: opts, pages: map[string]*template.Template{}, sessions: map[string]*session{},
		xorig: http.NewCrossOriginProtection(), log: opts.Logger}
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		page := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if page == "layout" {
			continue
		}
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", n)
		if err != nil {
			return nil, fmt.Errorf("console: template %s: %w", page, err)
		}
		c.pages[page] = t
	}
	sub, _ := fs.Sub(staticFS, "static")
	c.static = http.StripPrefix(Prefix+"static/", http.FileServerFS(sub))
	return c, nil
}

// open reports whether the server has no tokens (nobody signs in).
func (c *Console) open() bool { return c.opts.Lookup == nil }

// ServeHTTP answers everything under Prefix.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	if c.open() && !loopbackHost(r.Host) {
		// Without tokens only loopback may reach the console; a foreign Host
		// is a DNS-rebinding page trying to read it.
		http.Error(w, "this console answers only to localhost: the server has no tokens", http.StatusMisdirectedRequest)
		return
	}
	if err := c.xorig.Check(r); err != nil {
		http.Error(w, "cross-origin request refused: use the console from its own pages", http.StatusForbidden)
		return
	}
	p := strings.TrimPrefix(r.URL.Path, strings.TrimSuffix(Prefix, "/"))
	if strings.HasPrefix(p, "/static/") {
		if strings.HasSuffix(p, "/") {
			http.NotFound(w, r) // no directory listings
			return
		}
		h.Set("Cache-Control", "no-cache")
		c.static.ServeHTTP(w, r)
		return
	}
	h.Set("Cache-Control", "no-store")
	sess := c.session(r)
	if p == "/login" {
		c.login(w, r, sess)
		return
	}
	if sess == nil || (!c.open() && sess.acc == nil) {
		if c.open() {
			sess = c.newSession(w, r, nil)
		} else {
			http.Redirect(w, r, Prefix+"login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return
		}
	}
	if r.Method == http.MethodPost {
		if err := r.ParseForm(); err != nil {
			c.fail(w, r, sess, fmt.Errorf("%w: %v", core.ErrInvalid, err))
			return
		}
		if subtle.ConstantTimeCompare([]byte(r.PostFormValue("csrf")), []byte(sess.csrf)) != 1 {
			http.Error(w, "the form's CSRF token is missing or stale: reload the page and try again", http.StatusForbidden)
			return
		}
	} else if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "use GET or POST", http.StatusMethodNotAllowed)
		return
	}
	q := &req{c: c, w: w, r: r, sess: sess}
	switch {
	case p == "":
		http.Redirect(w, r, Prefix, http.StatusMovedPermanently)
	case p == "/":
		q.browse()
	case p == "/search":
		q.search()
	case p == "/review":
		q.review()
	case p == "/review/decide" && r.Method == http.MethodPost:
		q.decide()
	case strings.HasPrefix(p, "/memory/"):
		q.memory(strings.TrimPrefix(p, "/memory/"))
	case p == "/health":
		q.health()
	case p == "/lessons":
		q.lessons()
	case p == "/pack":
		q.pack()
	case p == "/logout" && r.Method == http.MethodPost:
		c.mu.Lock()
		for id, s := range c.sessions {
			if s == sess {
				delete(c.sessions, id)
			}
		}
		c.mu.Unlock()
		http.SetCookie(w, c.cookie(r, "", -1))
		http.Redirect(w, r, Prefix+"login", http.StatusSeeOther)
	default:
		q.fail(fmt.Errorf("%w: no console page %s", core.ErrNotFound, r.URL.Path))
	}
}

const cookieName = "memos_console"

func (c *Console) cookie(r *http.Request, value string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: cookieName, Value: value, Path: Prefix, MaxAge: maxAge, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil}
}

// session returns the request's live session, nil when it has none.
func (c *Console) session(r *http.Request) *session {
	ck, err := r.Cookie(cookieName)
	if err != nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.sessions[ck.Value]
	if s != nil && time.Now().After(s.expires) {
		delete(c.sessions, ck.Value)
		return nil
	}
	return s
}

// newSession starts a session for acc and sets its cookie.
func (c *Console) newSession(w http.ResponseWriter, r *http.Request, acc *api.Access) *session {
	id, csrf := random(), random()
	s := &session{acc: acc, csrf: csrf, expires: time.Now().Add(SessionTTL)}
	c.mu.Lock()
	now := time.Now()
	for k, o := range c.sessions {
		if now.After(o.expires) || len(c.sessions) >= maxSessions {
			delete(c.sessions, k)
		}
	}
	c.sessions[id] = s
	c.mu.Unlock()
	http.SetCookie(w, c.cookie(r, id, int(SessionTTL/time.Second)))
	return s
}

func random() string {
	var b [32]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// login shows the sign-in form and checks a token against the server's.
func (c *Console) login(w http.ResponseWriter, r *http.Request, sess *session) {
	next := r.FormValue("next")
	if !strings.HasPrefix(next, Prefix) || strings.HasPrefix(next, "//") || strings.Contains(next, "\\") {
		next = Prefix
	}
	if c.open() {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	data := map[string]any{"Next": next}
	if r.Method == http.MethodPost {
		acc := c.opts.Lookup(strings.TrimSpace(r.PostFormValue("token")))
		if acc != nil {
			if sess != nil {
				c.mu.Lock()
				for id, s := range c.sessions {
					if s == sess {
						delete(c.sessions, id) // a fresh id on every sign-in
					}
				}
				c.mu.Unlock()
			}
			c.newSession(w, r, acc)
			http.Redirect(w, r, next, http.StatusSeeOther)
			return
		}
		c.log.Warn("console: sign-in with an unknown token", "remote", r.RemoteAddr)
		data["Error"] = "That token is not one of this server's tokens (server.tokens or MEMOS_TOKEN)."
		w.WriteHeader(http.StatusUnauthorized)
	}
	c.render(w, http.StatusOK, "login", &page{Title: "Sign in", Data: data})
}

// loopbackHost reports whether a Host header names this machine.
func loopbackHost(host string) bool {
	h, _, err := net.SplitHostPort(host)
	if err != nil {
		h = host
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// page is what the layout renders around a page's own data.
type page struct {
	Title     string
	Nav       string
	Who       string
	CSRF      string
	SignedIn  bool
	Namespace string
	// Namespaces are those the caller may pick (nil: any, typed freely).
	Namespaces []string
	Flash      string
	Error      string
	Data       any
}

func (c *Console) render(w http.ResponseWriter, status int, name string, p *page) {
	var buf bytes.Buffer
	t := c.pages[name]
	if t == nil {
		http.Error(w, "no template "+name, http.StatusInternalServerError)
		return
	}
	if err := t.Execute(&buf, p); err != nil {
		c.log.Error("console: render", "page", name, "err", err)
		http.Error(w, "the page could not be rendered; the server log says why", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if status != http.StatusOK {
		w.WriteHeader(status)
	}
	w.Write(buf.Bytes())
}

// req is one request to a console page.
type req struct {
	c    *Console
	w    http.ResponseWriter
	r    *http.Request
	sess *session
}

// ns is the namespace the page works in: the form's, else the caller's
// only one, else the service's default.
func (q *req) ns() string {
	if ns := strings.TrimSpace(q.r.FormValue("ns")); ns != "" {
		return ns
	}
	if acc := q.sess.acc; acc != nil && len(acc.Namespaces) > 0 {
		return acc.Namespaces[0]
	}
	return q.c.opts.Service.Engine.Namespace()
}

// who names the person acting, for audit notes.
func (q *req) who() string {
	if q.sess.acc == nil {
		return "console (loopback, no token)"
	}
	return "console (token " + q.sess.acc.Name + ")"
}

// call runs operation name with in (a request struct of the op, encoded
// as the JSON body the API would get) through the service.
func call[O any](q *req, name string, in any) (*O, error) {
	o, ok := api.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("console: no operation %s", name)
	}
	body, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	out, err := q.c.opts.Service.Call(q.r.Context(), o, body, q.sess.acc)
	if err != nil {
		return nil, err
	}
	v, ok := out.(*O)
	if !ok {
		return nil, fmt.Errorf("console: %s answered %T", name, out)
	}
	return v, nil
}

// page starts the layout data for a page.
func (q *req) page(title, nav string, data any) *page {
	p := &page{Title: title, Nav: nav, CSRF: q.sess.csrf, SignedIn: q.sess.acc != nil,
		Namespace: q.ns(), Data: data}
	if q.sess.acc != nil {
		p.Who = q.sess.acc.Name
		p.Namespaces = q.sess.acc.Namespaces
	}
	q.c.mu.Lock()
	p.Flash, q.sess.flash = q.sess.flash, ""
	q.c.mu.Unlock()
	return p
}

// show renders a page; err, if any, is shown in place with its status.
func (q *req) show(name string, p *page, err error) {
	status := http.StatusOK
	if err != nil {
		p.Error = err.Error()
		status = api.KindOf(err).HTTP
	}
	q.c.render(q.w, status, name, p)
}

// fail renders an error page.
func (q *req) fail(err error) { q.c.fail(q.w, q.r, q.sess, err) }

func (c *Console) fail(w http.ResponseWriter, r *http.Request, sess *session, err error) {
	q := &req{c: c, w: w, r: r, sess: sess}
	q.show("error", q.page("Error", "", nil), err)
}

// done stores a message for the next page and redirects there (post,
// redirect, get: a reload never repeats an action).
func (q *req) done(to, msg string) {
	q.c.mu.Lock()
	q.sess.flash = msg
	q.c.mu.Unlock()
	http.Redirect(q.w, q.r, to, http.StatusSeeOther)
}

// Mounted reports whether path is the console's.
func Mounted(path string) bool {
	return path == strings.TrimSuffix(Prefix, "/") || strings.HasPrefix(path, Prefix)
}

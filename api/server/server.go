// Package server is memos' HTTP front-end: the operation table (package
// api) as JSON routes under /api/mem/, the MCP server (api/mcpserver) over
// streamable HTTP at /mcp, the web console at /console/ (api/console, which
// signs people in itself), the OpenAPI document at /openapi.json, health
// and readiness probes and Prometheus metrics, behind one set of rules:
// bearer tokens (required beyond loopback, optionally limited to
// namespaces), a body limit, a per-request timeout, no CORS unless
// configured, request ids in the logs, and a graceful shutdown that drains
// in-flight requests.
package server

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/memos-go/memos/api"
	"github.com/memos-go/memos/api/console"
	"github.com/memos-go/memos/api/mcpserver"
	"github.com/memos-go/memos/core"
)

// Defaults of Options.
const (
	DefaultAddr            = "127.0.0.1:7077"
	DefaultMaxBody         = 1 << 20
	DefaultTimeout         = 30 * time.Second
	DefaultShutdownTimeout = 30 * time.Second
)

// Token is a bearer token and what it may reach.
type Token struct {
	// Name identifies the token in logs and metrics (default: token-N).
	Name string `json:"name,omitempty" koanf:"name"`
	// Token is the secret a client sends as "Authorization: Bearer <token>".
	Token string `json:"token" koanf:"token"`
	// Namespaces limits the token to these namespaces (reads also see the
	// shared default namespace); empty means every namespace.
	Namespaces []string `json:"namespaces,omitempty" koanf:"namespaces"`
}

// Options configure a Server; zero fields take the defaults.
type Options struct {
	// Addr is where Listen listens (default 127.0.0.1:7077). Any address
	// that is not loopback requires Tokens.
	Addr string
	// Tokens, when any, are required on every request but /healthz and
	// /readyz.
	Tokens []Token
	// MaxBody bounds a request body in bytes (413 beyond it).
	MaxBody int64
	// Timeout bounds each operation (504 beyond it).
	Timeout time.Duration
	// ShutdownTimeout bounds how long Serve waits for in-flight requests
	// once its context is done.
	ShutdownTimeout time.Duration
	// CORSOrigins are the browser origins allowed to call the API ("*":
	// any); none means no CORS headers at all.
	CORSOrigins []string
	// StorePath is the store's file or directory, for the store-size metric.
	StorePath string
	// Version is reported in /openapi.json and to MCP clients.
	Version string
	// Logger receives one line per request (default slog.Default()).
	Logger *slog.Logger
	// NoConsole turns the web console off: every path under /console/
	// answers 404, saying so.
	NoConsole bool
}

// Server serves one engine over HTTP and MCP. Create it with New.
type Server struct {
	opts    Options
	svc     *api.Service
	tokens  []token
	log     *slog.Logger
	mcp     http.Handler
	console *console.Console
	openapi []byte
	metrics *metrics
	reg     *prometheus.Registry
	// stopping is cancelled when shutdown starts, ending MCP event streams
	// (which would otherwise hold shutdown until its deadline).
	stopping context.Context
	stop     context.CancelFunc
	ready    atomic.Bool
}

type token struct {
	hash   [32]byte
	access *api.Access
}

// New checks opts and returns a server for eng. It does not listen.
func New(eng *core.Engine, opts Options) (*Server, error) {
	if opts.Addr == "" {
		opts.Addr = DefaultAddr
	}
	if opts.MaxBody == 0 {
		opts.MaxBody = DefaultMaxBody
	}
	if opts.Timeout == 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.ShutdownTimeout == 0 {
		opts.ShutdownTimeout = DefaultShutdownTimeout
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.MaxBody < 0 || opts.Timeout < 0 || opts.ShutdownTimeout < 0 {
		return nil, core.Invalidf("server: max_body, timeout and shutdown_timeout must be positive")
	}
	s := &Server{opts: opts, svc: &api.Service{Engine: eng, Timeout: opts.Timeout}, log: opts.Logger}
	for i, t := range opts.Tokens {
		if len(t.Token) < 16 {
			return nil, core.Invalidf("server.tokens[%d]: a token must be at least 16 characters (e.g. openssl rand -hex 32)", i)
		}
		name := t.Name
		if name == "" {
			name = fmt.Sprintf("token-%d", i+1)
		}
		var nss []string
		for _, ns := range t.Namespaces {
			if err := core.ValidateNamespace(ns); err != nil {
				return nil, fmt.Errorf("server.tokens[%d] (%s): %w", i, name, err)
			}
			nss = append(nss, ns)
		}
		s.tokens = append(s.tokens, token{hash: sha256.Sum256([]byte(t.Token)), access: &api.Access{Name: name, Namespaces: nss}})
	}
	if len(s.tokens) == 0 && !Loopback(opts.Addr) {
		return nil, core.Invalidf("server: %s is not a loopback address, so memos requires a token: set server.tokens in config.yaml or MEMOS_TOKEN", opts.Addr)
	}
	var err error
	if s.openapi, err = api.OpenAPI(opts.Version); err != nil {
		return nil, fmt.Errorf("server: openapi: %w", err)
	}
	s.stopping, s.stop = context.WithCancel(context.Background())
	s.reg = prometheus.NewRegistry()
	s.metrics = newMetrics(s.reg, opts.StorePath)
	s.svc.Observe = func(ctx context.Context, o *api.Op, err error, d time.Duration) {
		s.metrics.observe(o.Name, Transport(ctx), err, d)
	}
	if !opts.NoConsole {
		copts := console.Options{Service: s.svc, Logger: opts.Logger}
		if len(s.tokens) > 0 {
			copts.Lookup = s.lookup
		}
		if s.console, err = console.New(copts); err != nil {
			return nil, err
		}
	}
	mcpSrv := mcpserver.New(s.svc, opts.Version)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return mcpSrv }, &mcp.StreamableHTTPOptions{Logger: opts.Logger})
	s.mcp = auth.RequireBearerToken(s.verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h)
	if len(s.tokens) == 0 {
		s.mcp = h
	}
	s.ready.Store(true)
	return s, nil
}

// Loopback reports whether addr (host:port) names a loopback address.
func Loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Listen listens on opts.Addr.
func (s *Server) Listen() (net.Listener, error) {
	ln, err := net.Listen("tcp", s.opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("%w: listen on %s: %v", core.ErrUnavailable, s.opts.Addr, err)
	}
	return ln, nil
}

// Serve answers requests on ln until ctx is done, then stops accepting,
// waits up to ShutdownTimeout for in-flight requests and returns. It does
// not close the engine: the caller does, after Serve returns.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       s.opts.Timeout + 10*time.Second, // a slow client cannot hold a request forever
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	s.ready.Store(false)
	s.stop()
	sctx, cancel := context.WithTimeout(context.Background(), s.opts.ShutdownTimeout)
	defer cancel()
	err := hs.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("%w: in-flight requests did not finish within %s", core.ErrUnavailable, s.opts.ShutdownTimeout)
		hs.Close()
	}
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}

// Handler returns the server's routes with every rule applied.
func (s *Server) Handler() http.Handler {
	routes := map[string]*api.Op{}
	for _, o := range api.Ops() {
		routes[o.Path()] = o
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := requestID(r)
		w.Header().Set("X-Request-ID", id)
		rw := &statusWriter{ResponseWriter: w}
		var acc *api.Access
		defer func() {
			who := ""
			if acc != nil {
				who = acc.Name
			}
			s.log.Info("request", "id", id, "method", r.Method, "path", r.URL.Path, "status", rw.status(),
				"bytes", rw.n, "ms", float64(time.Since(start).Microseconds())/1000, "token", who)
		}()
		if s.cors(rw, r) {
			return
		}
		switch r.URL.Path {
		case "/healthz":
			s.healthz(rw, r)
			return
		case "/readyz":
			if !s.ready.Load() {
				writeError(rw, fmt.Errorf("%w: shutting down", core.ErrClosed))
				return
			}
			s.plain(rw, r, "ready\n")
			return
		}
		if console.Mounted(r.URL.Path) {
			if s.console == nil {
				writeError(rw, &httpError{kind: "not_found", status: http.StatusNotFound,
					msg: "the web console is turned off on this server (server.console: false)"})
				return
			}
			// The console signs people in itself (session cookie, see package console).
			r.Body = http.MaxBytesReader(rw, r.Body, s.opts.MaxBody)
			s.console.ServeHTTP(rw, r.WithContext(withTransport(r.Context(), "console")))
			return
		}
		var err error
		if acc, err = s.authenticate(r); err != nil {
			writeError(rw, err)
			return
		}
		switch p := r.URL.Path; {
		case p == "/openapi.json":
			if r.Method != http.MethodGet && r.Method != http.MethodHead {
				writeError(rw, methodError(r, "GET"))
				return
			}
			rw.Header().Set("Content-Type", "application/json")
			rw.Write(s.openapi)
		case p == "/metrics":
			if acc != nil && acc.Namespaces != nil {
				writeError(rw, fmt.Errorf("%w: metrics cover the whole store; this token is limited to namespaces", api.ErrForbidden))
				return
			}
			promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{}).ServeHTTP(rw, r)
		case p == "/mcp":
			r.Body = http.MaxBytesReader(rw, r.Body, s.opts.MaxBody)
			if r.Method == http.MethodGet {
				// An event stream lasts as long as the session; end it at shutdown.
				ctx, cancel := context.WithCancel(r.Context())
				defer cancel()
				defer context.AfterFunc(s.stopping, cancel)()
				r = r.WithContext(ctx)
			}
			s.mcp.ServeHTTP(rw, r)
		default:
			o, ok := routes[p]
			if !ok {
				writeError(rw, &httpError{kind: "not_found", status: http.StatusNotFound,
					msg: fmt.Sprintf("no route %s %s: operations are POST /api/mem/<operation>, see /openapi.json", r.Method, p)})
				return
			}
			if r.Method != http.MethodPost {
				writeError(rw, methodError(r, "POST"))
				return
			}
			s.serveOp(rw, r, o, acc)
		}
	})
}

func (s *Server) plain(w http.ResponseWriter, r *http.Request, body string) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		writeError(w, methodError(r, "GET"))
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	io.WriteString(w, body)
}

// healthz answers that the process is up, and which memos it is.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		writeError(w, methodError(r, "GET"))
		return
	}
	b, _ := json.Marshal(map[string]string{"status": "ok", "version": s.opts.Version})
	w.Header().Set("Content-Type", "application/json")
	w.Write(append(b, '\n'))
}

// serveOp runs one operation of the table.
func (s *Server) serveOp(w http.ResponseWriter, r *http.Request, o *api.Op, acc *api.Access) {
	if o.Stream != nil && o.Stream.Read != nil && isNDJSON(r.Header.Get("Content-Type")) {
		s.serveReadStream(w, r, o, acc)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			err = &httpError{kind: "too_large", status: http.StatusRequestEntityTooLarge,
				msg: fmt.Sprintf("request body is over the limit of %d bytes (server.max_body); split a large batch into several requests", mbe.Limit)}
		} else {
			err = fmt.Errorf("%w: read request body: %v", core.ErrInvalid, err)
		}
		s.metrics.observe(o.Name, "http", err, 0)
		writeError(w, err)
		return
	}
	ctx := withTransport(r.Context(), "http")
	if o.Stream != nil && o.Stream.Write != nil && !wantsJSON(r.Header.Get("Accept")) {
		s.serveWriteStream(w, ctx, o, body, acc)
		return
	}
	out, err := s.svc.Call(ctx, o, body, acc)
	if err != nil {
		writeError(w, err)
		return
	}
	b, err := api.Encode(out)
	if err != nil {
		writeError(w, fmt.Errorf("encode %s answer: %w", o.Name, err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

// serveWriteStream answers an export as NDJSON, as it is written. Its
// errors come before the first line; should one come later (a write to the
// client failed), the connection is cut so that a truncated export never
// passes for a whole one.
func (s *Server) serveWriteStream(w http.ResponseWriter, ctx context.Context, o *api.Op, body []byte, acc *api.Access) {
	in, err := o.Decode(body)
	if err != nil {
		s.metrics.observe(o.Name, "http", err, 0)
		writeError(w, err)
		return
	}
	sw := &ndjsonWriter{w: w}
	if _, err := s.svc.WriteStream(ctx, o, in, acc, sw); err != nil {
		if sw.started {
			s.log.Warn("stream cut short", "op", o.Name, "err", err)
			panic(http.ErrAbortHandler)
		}
		writeError(w, err)
	}
}

// ndjsonWriter sets the NDJSON content type on the first write.
type ndjsonWriter struct {
	w       http.ResponseWriter
	started bool
}

func (n *ndjsonWriter) Write(b []byte) (int, error) {
	if !n.started {
		n.started = true
		n.w.Header().Set("Content-Type", "application/x-ndjson")
	}
	return n.w.Write(b)
}

// serveReadStream runs an import whose request body is the NDJSON data
// itself, read as it arrives and bounded by max_body as every body is; its
// other fields come from the URL query (?namespace=…&dry_run=true).
func (s *Server) serveReadStream(w http.ResponseWriter, r *http.Request, o *api.Op, acc *api.Access) {
	ctx := withTransport(r.Context(), "http")
	in, err := queryInput(o, r.URL.Query())
	if err == nil {
		var out any
		body := &boundedBody{r: http.MaxBytesReader(w, r.Body, s.opts.MaxBody)}
		out, err = s.svc.ReadStream(ctx, o, in, acc, body)
		if body.over != nil {
			// The import read nothing past the bound and stored nothing.
			err = &httpError{kind: "too_large", status: http.StatusRequestEntityTooLarge,
				msg: fmt.Sprintf("%s: the NDJSON body is over the limit of %d bytes (server.max_body); raise server.max_body, or import the file with memos import jsonl where the store is", o.Name, body.over.Limit)}
		}
		if err == nil {
			b, err := api.Encode(out)
			if err != nil {
				writeError(w, fmt.Errorf("encode %s answer: %w", o.Name, err))
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.Write(b)
			return
		}
	} else {
		s.metrics.observe(o.Name, "http", err, 0)
	}
	writeError(w, err)
}

// boundedBody reads a request body through http.MaxBytesReader and keeps
// the error it gives past the bound, whatever the reader's caller makes of it.
type boundedBody struct {
	r    io.Reader
	over *http.MaxBytesError
}

func (b *boundedBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		b.over = mbe
	}
	return n, err
}

// queryInput decodes the URL query as o's input: each parameter is the
// field of its name, a boolean or a number where the field is one.
func queryInput(o *api.Op, q url.Values) (any, error) {
	props := o.InputSchema().Properties
	obj := map[string]any{}
	for k, vs := range q {
		v := vs[len(vs)-1]
		obj[k] = v
		if p := props.GetPair(k); p != nil {
			switch p.Value.Type {
			case "boolean":
				b, err := strconv.ParseBool(v)
				if err != nil {
					return nil, core.Invalidf("%s: query parameter %s=%q: want true or false", o.Name, k, v)
				}
				obj[k] = b
			case "integer", "number":
				obj[k] = json.Number(v)
			}
		}
	}
	body, err := json.Marshal(obj)
	if err != nil {
		return nil, core.Invalidf("%s: query: %v", o.Name, err)
	}
	return o.Decode(body)
}

// isNDJSON reports whether a content type is newline-delimited JSON.
func isNDJSON(ct string) bool {
	mt, _, _ := mime.ParseMediaType(ct)
	return mt == "application/x-ndjson" || mt == "application/jsonl" || mt == "application/x-jsonlines"
}

// wantsJSON reports whether an Accept header asks for JSON rather than
// NDJSON (for an operation that streams by default).
func wantsJSON(accept string) bool {
	for _, part := range strings.Split(accept, ",") {
		if mt, _, _ := mime.ParseMediaType(strings.TrimSpace(part)); mt == "application/json" {
			return true
		}
	}
	return false
}

// authenticate finds the caller's token. Without configured tokens every
// caller is unrestricted (the server then listens on loopback only).
func (s *Server) authenticate(r *http.Request) (*api.Access, error) {
	if len(s.tokens) == 0 {
		return nil, nil
	}
	h := r.Header.Get("Authorization")
	scheme, secret, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "bearer") || strings.TrimSpace(secret) == "" {
		return nil, &httpError{kind: "unauthorized", status: http.StatusUnauthorized,
			msg: "this server requires a token: send Authorization: Bearer <token>"}
	}
	if acc := s.lookup(strings.TrimSpace(secret)); acc != nil {
		return acc, nil
	}
	return nil, &httpError{kind: "unauthorized", status: http.StatusUnauthorized, msg: "the bearer token is not one of server.tokens"}
}

// lookup compares secret with every token in constant time (no early exit,
// equal-length hashes), so timing says nothing about how much matched.
func (s *Server) lookup(secret string) *api.Access {
	h := sha256.Sum256([]byte(secret))
	var found *api.Access
	for _, t := range s.tokens {
		if subtle.ConstantTimeCompare(h[:], t.hash[:]) == 1 {
			found = t.access
		}
	}
	return found
}

// verify hands the token's access to the MCP SDK, which passes it to tool
// handlers as TokenInfo. authenticate has already checked the token.
func (s *Server) verify(_ context.Context, secret string, _ *http.Request) (*auth.TokenInfo, error) {
	acc := s.lookup(secret)
	if acc == nil {
		return nil, auth.ErrInvalidToken
	}
	return &auth.TokenInfo{UserID: acc.Name, Extra: map[string]any{mcpserver.AccessKey: acc}}, nil
}

// cors answers preflight requests and sets CORS headers for configured
// origins; it reports whether the request was fully answered.
func (s *Server) cors(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" || len(s.opts.CORSOrigins) == 0 {
		return false
	}
	if !slices.Contains(s.opts.CORSOrigins, "*") && !slices.Contains(s.opts.CORSOrigins, origin) {
		return false
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", origin)
	h.Add("Vary", "Origin")
	if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
		h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS")
		h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID")
		h.Set("Access-Control-Max-Age", "600")
		w.WriteHeader(http.StatusNoContent)
		return true
	}
	h.Set("Access-Control-Expose-Headers", "Mcp-Session-Id, X-Request-ID")
	return false
}

// httpError is an error only the HTTP front-end produces.
type httpError struct {
	kind   string
	status int
	msg    string
	allow  string // for 405: the method to use
}

func (e *httpError) Error() string { return e.msg }

func methodError(r *http.Request, allow string) error {
	return &httpError{kind: "method_not_allowed", status: http.StatusMethodNotAllowed, allow: allow,
		msg: fmt.Sprintf("%s %s: use %s", r.Method, r.URL.Path, allow)}
}

// writeError answers with {"error":{"kind","message"}} and the status the
// error's kind maps to.
func writeError(w http.ResponseWriter, err error) {
	body := api.Errorf(err)
	status := api.KindOf(err).HTTP
	var he *httpError
	if errors.As(err, &he) {
		body.Error.Kind, status = he.kind, he.status
		if he.allow != "" {
			w.Header().Set("Allow", he.allow)
		}
		if status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", `Bearer realm="memos"`)
		}
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // messages quote <token>, <operation>
	enc.Encode(body)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, b.String())
}

// requestID returns the client's X-Request-ID when it is a sane token,
// else a new random one.
func requestID(r *http.Request) string {
	if id := r.Header.Get("X-Request-ID"); id != "" && len(id) <= 64 && !strings.ContainsFunc(id, func(c rune) bool { return c <= ' ' || c > '~' }) {
		return id
	}
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// statusWriter records the status and size of a response.
type statusWriter struct {
	http.ResponseWriter
	code int
	n    int64
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.n += int64(n)
	return n, err
}

func (w *statusWriter) status() int {
	if w.code == 0 {
		return http.StatusOK
	}
	return w.code
}

// Flush lets MCP event streams reach the client as they are written.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// metrics are the Prometheus series the server exports.
type metrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

func newMetrics(reg *prometheus.Registry, storePath string) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "memos_requests_total",
			Help: "Operations served, by operation, transport (http, mcp) and result (ok or an error kind)."}, []string{"op", "transport", "result"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "memos_request_duration_seconds",
			Help:    "Time to serve an operation, by operation and transport.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}}, []string{"op", "transport"}),
	}
	reg.MustRegister(m.requests, m.latency, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if storePath != "" {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "memos_store_bytes",
			Help: "Bytes the store's files take on disk (the store, its WAL or index, the vector snapshot)."},
			func() float64 { return float64(storeSize(storePath)) }))
	}
	return m
}

// observe records one operation.
func (m *metrics) observe(op, transport string, err error, d time.Duration) {
	result := "ok"
	if err != nil {
		result = api.KindOf(err).Name
		var he *httpError
		if errors.As(err, &he) {
			result = he.kind
		}
	}
	m.requests.WithLabelValues(op, transport, result).Inc()
	if d > 0 {
		m.latency.WithLabelValues(op, transport).Observe(d.Seconds())
	}
}

// storeSize adds up path (a file or a directory) and its siblings that
// start with its name (SQLite's -wal and -shm, the .vectors snapshot).
func storeSize(path string) int64 {
	matches, _ := filepath.Glob(path + "*")
	var n int64
	for _, p := range matches {
		filepath.WalkDir(p, func(_ string, d os.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				if fi, err := d.Info(); err == nil {
					n += fi.Size()
				}
			}
			return nil
		})
	}
	return n
}

type transportKey struct{}

func withTransport(ctx context.Context, t string) context.Context {
	return context.WithValue(ctx, transportKey{}, t)
}

// Transport reports the front-end a call came through: "http", "console"
// or "mcp".
func Transport(ctx context.Context) string {
	if t, _ := ctx.Value(transportKey{}).(string); t != "" {
		return t
	}
	return "mcp"
}

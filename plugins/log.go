package plugins

import (
	"bytes"
	"context"
	"io"
	"log"
	"log/slog"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"
)

// hclogger adapts a *slog.Logger to hclog.Logger, the logger go-plugin
// writes to. go-plugin parses each line a plugin writes to stderr (JSON lines
// from hclog or plugins/sdk keep their level and fields) and logs it through
// a sub-logger named after the binary, so a plugin's log ends up in memos'
// structured log with its level. go-plugin's own Info messages ("plugin
// process exited" after every Close) are demoted to Debug, so that a normal
// run logs nothing; its warnings and errors (a crash) keep their level.
type hclogger struct {
	l      *slog.Logger
	plugin string // the binary's base name: the sub-logger of its lines
	name   string
	args   []any
}

var _ hclog.Logger = (*hclogger)(nil)

func newHCLogger(l *slog.Logger, plugin string) *hclogger {
	return &hclogger{l: l, plugin: plugin}
}

// hclog's Trace has no slog level; it maps below Debug.
const levelTrace = slog.LevelDebug - 4

func toSlog(lv hclog.Level) slog.Level {
	switch lv {
	case hclog.Trace:
		return levelTrace
	case hclog.Debug:
		return slog.LevelDebug
	case hclog.Warn:
		return slog.LevelWarn
	case hclog.Error:
		return slog.LevelError
	default:
		return slog.LevelInfo
	}
}

func (h *hclogger) Log(lv hclog.Level, msg string, args ...any) {
	level := toSlog(lv)
	fromPlugin := h.name == h.plugin
	if !fromPlugin && level == slog.LevelInfo {
		level = slog.LevelDebug
	}
	ctx := context.Background()
	if !h.l.Enabled(ctx, level) {
		return
	}
	if !fromPlugin && h.name != "" {
		args = append([]any{"logger", h.name}, args...)
	}
	h.l.Log(ctx, level, msg, args...)
}

func (h *hclogger) Trace(msg string, args ...any) { h.Log(hclog.Trace, msg, args...) }
func (h *hclogger) Debug(msg string, args ...any) { h.Log(hclog.Debug, msg, args...) }
func (h *hclogger) Info(msg string, args ...any)  { h.Log(hclog.Info, msg, args...) }
func (h *hclogger) Warn(msg string, args ...any)  { h.Log(hclog.Warn, msg, args...) }
func (h *hclogger) Error(msg string, args ...any) { h.Log(hclog.Error, msg, args...) }

func (h *hclogger) enabled(lv hclog.Level) bool {
	return h.l.Enabled(context.Background(), toSlog(lv))
}

func (h *hclogger) IsTrace() bool { return h.enabled(hclog.Trace) }
func (h *hclogger) IsDebug() bool { return h.enabled(hclog.Debug) }
func (h *hclogger) IsInfo() bool  { return h.enabled(hclog.Info) }
func (h *hclogger) IsWarn() bool  { return h.enabled(hclog.Warn) }
func (h *hclogger) IsError() bool { return h.enabled(hclog.Error) }

func (h *hclogger) ImpliedArgs() []any { return h.args }

func (h *hclogger) With(args ...any) hclog.Logger {
	return &hclogger{l: h.l.With(args...), plugin: h.plugin, name: h.name, args: append(append([]any(nil), h.args...), args...)}
}

func (h *hclogger) Name() string { return h.name }

func (h *hclogger) Named(name string) hclog.Logger {
	if h.name != "" {
		name = h.name + "." + name
	}
	return h.ResetNamed(name)
}

func (h *hclogger) ResetNamed(name string) hclog.Logger {
	return &hclogger{l: h.l, plugin: h.plugin, name: name, args: h.args}
}

// SetLevel is a no-op: the slog handler decides what is logged.
func (h *hclogger) SetLevel(hclog.Level) {}

// GetLevel reports the lowest level the slog handler accepts; go-plugin
// uses it to skip parsing plugin lines that would be dropped anyway.
func (h *hclogger) GetLevel() hclog.Level {
	for _, lv := range []hclog.Level{hclog.Trace, hclog.Debug, hclog.Info, hclog.Warn, hclog.Error} {
		if h.enabled(lv) {
			return lv
		}
	}
	return hclog.Off
}

func (h *hclogger) StandardLogger(opts *hclog.StandardLoggerOptions) *log.Logger {
	return log.New(h.StandardWriter(opts), "", 0)
}

func (h *hclogger) StandardWriter(*hclog.StandardLoggerOptions) io.Writer {
	return lineWriter{h}
}

// lineWriter logs each write as one Info line.
type lineWriter struct{ h *hclogger }

func (w lineWriter) Write(p []byte) (int, error) {
	w.h.Info(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// streamWriter logs what a plugin writes to os.Stdout or os.Stderr after
// it started serving (go-plugin forwards both over the connection), one
// Info line per line written, with a "stream" attribute.
type streamWriter struct {
	l      *slog.Logger
	stream string
	mu     sync.Mutex
	buf    []byte
}

func newStreamWriter(l *slog.Logger, stream string) *streamWriter {
	return &streamWriter{l: l, stream: stream}
}

func (w *streamWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		if line := strings.TrimRight(string(w.buf[:i]), "\r"); line != "" {
			w.l.Info(line, "stream", w.stream)
		}
		w.buf = w.buf[i+1:]
	}
	if len(w.buf) > 64<<10 { // a very long line without newline: log it in pieces
		w.l.Info(string(w.buf), "stream", w.stream)
		w.buf = w.buf[:0]
	}
	return len(p), nil
}

package cli

import (
	"io"
	"log/slog"
	"strings"
)

// LogLevelEnv names the environment variable that sets the log level:
// debug, info (the default), warn or error.
const LogLevelEnv = "MEMOS_LOG_LEVEL"

// Logger returns the logger a memos program installs with slog.SetDefault:
// text lines on w (standard error) at the level environ's MEMOS_LOG_LEVEL
// names. Plugins log through it (their stderr lines keep their levels), as
// does everything else that uses slog's default logger. An unknown level is
// reported through the logger itself and info is used.
func Logger(w io.Writer, environ []string) *slog.Logger {
	var level slog.Level
	var bad string
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, LogLevelEnv+"="); ok && v != "" {
			if err := level.UnmarshalText([]byte(v)); err != nil {
				level, bad = slog.LevelInfo, v
			}
		}
	}
	l := slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
	if bad != "" {
		l.Warn("unknown log level; using info", "env", LogLevelEnv, "value", bad, "want", "debug, info, warn or error")
	}
	return l
}

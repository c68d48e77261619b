package core

import (
	"strings"
	"time"
)

// FormatDuration writes d as memos' configuration, answers and reports
// write durations, without zero minutes and seconds: 720h, 1h30m, 1m,
// 2.5s, 250ms. time.ParseDuration reads it back.
func FormatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

package core

import (
	"encoding/json"
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

// Duration is a time.Duration that JSON writes as a string in the syntax
// the configuration takes ("720h", "1m30s", "250ms"), with FormatDuration,
// and reads back: the duration fields of answers (api) and of benchmark
// reports (core/bench).
type Duration time.Duration

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// String is FormatDuration's.
func (d Duration) String() string { return FormatDuration(time.Duration(d)) }

// MarshalJSON writes d as FormatDuration does.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON reads a duration string such as "720h", or a whole
// number of nanoseconds, the form reports and answers wrote before
// (benchmark reports' settings.search, explain's config).
func (d *Duration) UnmarshalJSON(b []byte) error {
	var ns int64
	if json.Unmarshal(b, &ns) == nil {
		*d = Duration(ns)
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return invalidf("a duration is a string such as \"720h\" or \"1.5s\"")
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return invalidf("duration %q: use a number with a unit, such as \"720h\" or \"1.5s\"", s)
	}
	*d = Duration(v)
	return nil
}

// Durations converts ds to Durations (never nil: JSON writes [] for none).
func Durations(ds []time.Duration) []Duration {
	out := make([]Duration, len(ds))
	for i, d := range ds {
		out[i] = Duration(d)
	}
	return out
}

// SearchSettings is a SearchConfig as answers and reports write it: its
// durations as Duration strings ("720h", "5s") under the configuration's
// names, not as nanoseconds. Every duration of SearchConfig is shadowed
// here (a test checks); the embedded SearchConfig's own duration fields
// are not written, and are zero after reading one back (see Config).
type SearchSettings struct {
	SearchConfig
	RecencyHalfLife Duration `json:"recency_half_life"`
	RerankTimeout   Duration `json:"rerank_timeout"`
	RerankPause     Duration `json:"rerank_pause"`
	AccessFlush     Duration `json:"access_flush"`
}

// NewSearchSettings wraps c as answers and reports write it.
func NewSearchSettings(c SearchConfig) SearchSettings {
	return SearchSettings{SearchConfig: c, RecencyHalfLife: Duration(c.RecencyHalfLife), RerankTimeout: Duration(c.RerankTimeout),
		RerankPause: Duration(c.RerankPause), AccessFlush: Duration(c.AccessFlush)}
}

// Config returns the SearchConfig s writes, with its durations.
func (s SearchSettings) Config() SearchConfig {
	c := s.SearchConfig
	c.RecencyHalfLife, c.RerankTimeout = s.RecencyHalfLife.D(), s.RerankTimeout.D()
	c.RerankPause, c.AccessFlush = s.RerankPause.D(), s.AccessFlush.D()
	return c
}

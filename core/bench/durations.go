package bench

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/memos-go/memos/core"
)

// The measured durations of a report are written in JSON as the
// configuration writes durations, "1.25ms" or "2m3.5s", under names
// without a unit (p50, not p50_ns); each type below keeps them out of its
// own fields (json:"-") and adds them here, and its UnmarshalJSON reads
// them back. Reports written with the old _ns names are not read.

func durations(ds []time.Duration) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = core.FormatDuration(d)
	}
	return out
}

// MarshalJSON writes r with its elapsed time as a duration.
func (r Report) MarshalJSON() ([]byte, error) {
	type fields Report
	return json.Marshal(struct {
		fields
		Elapsed string `json:"elapsed"`
	}{fields(r), core.FormatDuration(r.Elapsed)})
}

// MarshalJSON writes r with its index build and elapsed times as durations.
func (r Result) MarshalJSON() ([]byte, error) {
	type fields Result
	out := struct {
		fields
		IndexBuild string `json:"index_build,omitempty"`
		Elapsed    string `json:"elapsed"`
	}{fields: fields(r), Elapsed: core.FormatDuration(r.Elapsed)}
	if r.IndexBuild > 0 {
		out.IndexBuild = core.FormatDuration(r.IndexBuild)
	}
	return json.Marshal(out)
}

// MarshalJSON writes i with its times as durations.
func (i Ingest) MarshalJSON() ([]byte, error) {
	type fields Ingest
	return json.Marshal(struct {
		fields
		Total   string   `json:"total"`
		Batches []string `json:"batches"`
	}{fields(i), core.FormatDuration(i.Total), durations(i.Batches)})
}

// MarshalJSON writes o with its median as a duration.
func (o Open) MarshalJSON() ([]byte, error) {
	type fields Open
	return json.Marshal(struct {
		fields
		Median string `json:"median"`
	}{fields(o), core.FormatDuration(o.Median)})
}

// MarshalJSON writes s with its times as durations.
func (s OpenSample) MarshalJSON() ([]byte, error) {
	type fields OpenSample
	return json.Marshal(struct {
		fields
		Open       string `json:"open"`
		FirstQuery string `json:"first_query"`
	}{fields(s), core.FormatDuration(s.Open), core.FormatDuration(s.FirstQuery)})
}

// MarshalJSON writes l with its percentiles and samples as durations.
func (l Latency) MarshalJSON() ([]byte, error) {
	type fields Latency
	return json.Marshal(struct {
		fields
		P50     string   `json:"p50"`
		P95     string   `json:"p95"`
		P99     string   `json:"p99"`
		Mean    string   `json:"mean"`
		Max     string   `json:"max"`
		Samples []string `json:"samples"`
	}{fields(l), core.FormatDuration(l.P50), core.FormatDuration(l.P95), core.FormatDuration(l.P99), core.FormatDuration(l.Mean), core.FormatDuration(l.Max), durations(l.Samples)})
}

// The readers below take back what the writers above write, so that a
// saved report reads into a Report again.

func parseDurations(dst []*time.Duration, ss []*string) error {
	for i, s := range ss {
		if *s == "" {
			*dst[i] = 0
			continue
		}
		d, err := time.ParseDuration(*s)
		if err != nil {
			return fmt.Errorf("bench report: duration %q: %w", *s, err)
		}
		*dst[i] = d
	}
	return nil
}

func parseDurationList(ss []string) ([]time.Duration, error) {
	if ss == nil {
		return nil, nil
	}
	out := make([]time.Duration, len(ss))
	for i := range ss {
		if err := parseDurations([]*time.Duration{&out[i]}, []*string{&ss[i]}); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (r *Report) UnmarshalJSON(b []byte) error {
	type fields Report
	var in struct {
		*fields
		Elapsed string `json:"elapsed"`
	}
	in.fields = (*fields)(r)
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	return parseDurations([]*time.Duration{&r.Elapsed}, []*string{&in.Elapsed})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (r *Result) UnmarshalJSON(b []byte) error {
	type fields Result
	var in struct {
		*fields
		IndexBuild string `json:"index_build"`
		Elapsed    string `json:"elapsed"`
	}
	in.fields = (*fields)(r)
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	return parseDurations([]*time.Duration{&r.IndexBuild, &r.Elapsed}, []*string{&in.IndexBuild, &in.Elapsed})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (i *Ingest) UnmarshalJSON(b []byte) error {
	type fields Ingest
	var in struct {
		*fields
		Total   string   `json:"total"`
		Batches []string `json:"batches"`
	}
	in.fields = (*fields)(i)
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	var err error
	if i.Batches, err = parseDurationList(in.Batches); err != nil {
		return err
	}
	return parseDurations([]*time.Duration{&i.Total}, []*string{&in.Total})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (o *Open) UnmarshalJSON(b []byte) error {
	type fields Open
	var in struct {
		*fields
		Median string `json:"median"`
	}
	in.fields = (*fields)(o)
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	return parseDurations([]*time.Duration{&o.Median}, []*string{&in.Median})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (s *OpenSample) UnmarshalJSON(b []byte) error {
	type fields OpenSample
	var in struct {
		*fields
		Open       string `json:"open"`
		FirstQuery string `json:"first_query"`
	}
	in.fields = (*fields)(s)
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	return parseDurations([]*time.Duration{&s.Open, &s.FirstQuery}, []*string{&in.Open, &in.FirstQuery})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (l *Latency) UnmarshalJSON(b []byte) error {
	type fields Latency
	var in struct {
		*fields
		P50     string   `json:"p50"`
		P95     string   `json:"p95"`
		P99     string   `json:"p99"`
		Mean    string   `json:"mean"`
		Max     string   `json:"max"`
		Samples []string `json:"samples"`
	}
	in.fields = (*fields)(l)
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	var err error
	if l.Samples, err = parseDurationList(in.Samples); err != nil {
		return err
	}
	return parseDurations([]*time.Duration{&l.P50, &l.P95, &l.P99, &l.Mean, &l.Max},
		[]*string{&in.P50, &in.P95, &in.P99, &in.Mean, &in.Max})
}

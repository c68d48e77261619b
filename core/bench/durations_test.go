package bench

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/memos-go/memos/core"
)

// TestReportDurations: a report's JSON writes measured durations as the
// configuration writes them, under names without a unit, and nothing in
// nanoseconds.
func TestReportDurations(t *testing.T) {
	lat := &Latency{Queries: 2, P50: 1500 * time.Microsecond, P95: 2 * time.Millisecond, P99: 2 * time.Millisecond,
		Mean: 1750 * time.Microsecond, Max: 2 * time.Millisecond, Samples: []time.Duration{1500 * time.Microsecond, 2 * time.Millisecond}}
	r := Report{Elapsed: 90 * time.Second, Results: []*Result{{Dataset: "d", IndexBuild: 3 * time.Second, Elapsed: time.Minute,
		Ingest:  Ingest{Docs: 1, Total: 250 * time.Millisecond, Batches: []time.Duration{250 * time.Millisecond}},
		Open:    Open{Samples: []OpenSample{{Open: 40 * time.Millisecond, FirstQuery: 5 * time.Millisecond}}, Median: 45 * time.Millisecond},
		Latency: map[core.Mode]*Latency{core.ModeHybrid: lat}}}}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, want := range []string{`"elapsed":"1m30s"`, `"index_build":"3s"`, `"elapsed":"1m"`, `"total":"250ms"`, `"batches":["250ms"]`,
		`"open":"40ms"`, `"first_query":"5ms"`, `"median":"45ms"`, `"p50":"1.5ms"`, `"mean":"1.75ms"`, `"samples":["1.5ms","2ms"]`, `"queries":2`, `"dataset":"d"`} {
		if !strings.Contains(s, want) {
			t.Errorf("the report's JSON has no %s:\n%s", want, s)
		}
	}
	if strings.Contains(s, "_ns") {
		t.Errorf("the report's JSON still has nanosecond fields:\n%s", s)
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	res := back.Results[0]
	if back.Elapsed != r.Elapsed || res.IndexBuild != 3*time.Second || res.Ingest.Batches[0] != 250*time.Millisecond ||
		res.Open.Samples[0].FirstQuery != 5*time.Millisecond || res.Latency[core.ModeHybrid].Mean != lat.Mean || len(res.Latency[core.ModeHybrid].Samples) != 2 {
		t.Errorf("read back: %+v %+v", back, res)
	}
}

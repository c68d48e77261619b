package bench

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/memos-go/memos/core"
)

// TestReportDurations: a report's JSON writes measured durations and the
// search settings' durations as the configuration writes them, under
// names without a unit, and nothing in nanoseconds.
func TestReportDurations(t *testing.T) {
	type d = core.Duration
	lat := &Latency{Queries: 2, P50: d(1500 * time.Microsecond), P95: d(2 * time.Millisecond), P99: d(2 * time.Millisecond),
		Mean: d(1750 * time.Microsecond), Max: d(2 * time.Millisecond), Samples: []d{d(1500 * time.Microsecond), d(2 * time.Millisecond)}}
	r := Report{Elapsed: d(90 * time.Second), Settings: Settings{Search: core.NewSearchSettings(core.DefaultSearchConfig())},
		Results: []*Result{{Dataset: "d", IndexBuild: d(3 * time.Second), Elapsed: d(time.Minute),
			Ingest:  Ingest{Docs: 1, Total: d(250 * time.Millisecond), Batches: []d{d(250 * time.Millisecond)}},
			Open:    Open{Samples: []OpenSample{{Open: d(40 * time.Millisecond), FirstQuery: d(5 * time.Millisecond)}}, Median: d(45 * time.Millisecond)},
			Latency: map[core.Mode]*Latency{core.ModeHybrid: lat}}}}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, want := range []string{`"elapsed":"1m30s"`, `"index_build":"3s"`, `"elapsed":"1m"`, `"total":"250ms"`, `"batches":["250ms"]`,
		`"open":"40ms"`, `"first_query":"5ms"`, `"median":"45ms"`, `"p50":"1.5ms"`, `"mean":"1.75ms"`, `"samples":["1.5ms","2ms"]`, `"queries":2`, `"dataset":"d"`,
		`"recency_half_life":"720h"`, `"rerank_timeout":"5s"`} {
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
	if back.Elapsed != r.Elapsed || res.IndexBuild != d(3*time.Second) || res.Ingest.Batches[0] != d(250*time.Millisecond) ||
		res.Open.Samples[0].FirstQuery != d(5*time.Millisecond) || back.Settings.Search.Config().RecencyHalfLife != 720*time.Hour || res.Latency[core.ModeHybrid].Mean != lat.Mean || len(res.Latency[core.ModeHybrid].Samples) != 2 {
		t.Errorf("read back: %+v %+v", back, res)
	}
}

// TestReadEarlierReport: a report that memos bench wrote before
// settings.search wrote its durations as strings (commit 7c2a9e3, run with
// search.recency_half_life 48h and rerank_timeout 3s; nanoseconds there)
// reads back whole, and writes the same figures again in today's form.
func TestReadEarlierReport(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "report-7c2a9e3.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("an earlier report does not read: %v", err)
	}
	sc := r.Settings.Search.Config()
	if sc.RecencyHalfLife != 48*time.Hour || sc.RerankTimeout != 3*time.Second || sc.Candidates != r.Settings.Search.Candidates {
		t.Errorf("settings.search read as %+v", sc)
	}
	if len(r.Results) == 0 {
		t.Fatal("no results")
	}
	res := r.Results[0]
	lat := res.Latency[core.ModeHybrid]
	if r.Elapsed <= 0 || res.Elapsed <= 0 || res.Ingest.Total <= 0 || len(res.Ingest.Batches) == 0 || res.Open.Median <= 0 ||
		len(res.Open.Samples) == 0 || res.Open.Samples[0].Open <= 0 || lat == nil || lat.P50 <= 0 || lat.P50 > lat.Max || len(lat.Samples) != lat.Queries {
		t.Errorf("the measured durations did not read back: %+v", res)
	}
	again, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(again), `"recency_half_life":"48h"`) || !strings.Contains(string(again), `"rerank_timeout":"3s"`) {
		t.Errorf("rewritten, settings.search keeps nanoseconds: %s", again[:min(len(again), 600)])
	}
	var back Report
	if err := json.Unmarshal(again, &back); err != nil || !reflect.DeepEqual(back, r) {
		t.Errorf("rewritten and read again, the report changed (%v)", err)
	}
}

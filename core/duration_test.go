package core_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/memos-go/memos/core"
)

// TestDurationJSON: a Duration writes as the configuration writes
// durations and reads back to the nanosecond.
func TestDurationJSON(t *testing.T) {
	for d, want := range map[time.Duration]string{720 * time.Hour: "720h", 90 * time.Minute: "1h30m", time.Minute: "1m",
		2500 * time.Millisecond: "2.5s", 250 * time.Millisecond: "250ms", 1500 * time.Microsecond: "1.5ms", 0: "0s", time.Hour + time.Second: "1h0m1s"} {
		if got := core.FormatDuration(d); got != want {
			t.Errorf("FormatDuration(%v) = %q, want %q", d, got, want)
		}
		b, err := json.Marshal(core.Duration(d))
		if err != nil || string(b) != `"`+want+`"` {
			t.Errorf("Duration(%v) writes %s, %v; want %q", d, b, err, want)
		}
		var back core.Duration
		if err := json.Unmarshal(b, &back); err != nil || back.D() != d {
			t.Errorf("%s reads back as %v, %v", b, back.D(), err)
		}
	}
	var d core.Duration
	if err := json.Unmarshal([]byte(`1500000`), &d); err != nil || d.D() != 1500*time.Microsecond {
		t.Errorf("nanoseconds, the old form, read as %v, %v", d.D(), err)
	}
	for _, bad := range []string{`"12"`, `"soon"`, `true`, `1.5`} {
		if err := json.Unmarshal([]byte(bad), &d); !strings.Contains(fmtErr(err), "720h") {
			t.Errorf("%s: %v, want an error that shows the form", bad, err)
		}
	}
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestSearchSettingsDurations: SearchSettings writes every duration of
// SearchConfig as a string, never as nanoseconds, and Config reads back
// the SearchConfig it wrote.
func TestSearchSettingsDurations(t *testing.T) {
	sc := reflect.TypeFor[core.SearchConfig]()
	ss := reflect.TypeFor[core.SearchSettings]()
	for i := range sc.NumField() {
		f := sc.Field(i)
		if f.Type != reflect.TypeFor[time.Duration]() {
			continue
		}
		name := strings.Split(f.Tag.Get("json"), ",")[0]
		g, ok := ss.FieldByName(f.Name)
		if !ok || g.Type != reflect.TypeFor[core.Duration]() || strings.Split(g.Tag.Get("json"), ",")[0] != name || len(g.Index) != 1 {
			t.Errorf("SearchConfig.%s (%s) is a duration that SearchSettings does not write as a string: add it", f.Name, name)
		}
	}
	c := core.DefaultSearchConfig()
	b, err := json.Marshal(core.NewSearchSettings(c))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if v := got["recency_half_life"]; v != "720h" {
		t.Errorf("recency_half_life = %#v, want \"720h\" (%s)", v, b)
	}
	if _, ok := got["candidates"].(float64); !ok {
		t.Errorf("the other settings are lost: %s", b)
	}
	var back core.SearchSettings
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Config(), c) {
		t.Errorf("read back %+v, want %+v", back.Config(), c)
	}
}

package api

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/memos-go/memos/core"
)

// TestRenamedFields: a request field's old name is still read as its new
// one (for one release); giving both is an error, and the old names are in
// no schema.
func TestRenamedFields(t *testing.T) {
	for _, c := range []struct{ op, old, new string }{
		{"set-validity", `{"id":3,"from":"2020-01-01","to":""}`, `{"id":3,"valid_from":"2020-01-01","valid_to":""}`},
		{"quarantine-release", `{"id":3,"trust_level":"certain"}`, `{"id":3,"trust":"certain"}`},
		{"list", `{"pool":["raw"],"type":["turn"],"status":["archived"]}`, `{"pools":["raw"],"types":["turn"],"statuses":["archived"]}`},
	} {
		o, _ := Lookup(c.op)
		got, err := o.Decode([]byte(c.old))
		if err != nil {
			t.Fatalf("%s %s: %v", c.op, c.old, err)
		}
		want, err := o.Decode([]byte(c.new))
		if err != nil {
			t.Fatalf("%s %s: %v", c.op, c.new, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: old names decode to %+v, new ones to %+v", c.op, got, want)
		}
		for old := range o.Renamed {
			if o.InputSchema().Properties.GetPair(old) != nil {
				t.Errorf("%s: the schema still names %q", c.op, old)
			}
		}
	}
	o, _ := Lookup("quarantine-release")
	_, err := o.Decode([]byte(`{"id":3,"trust_level":"certain","trust":"inferred"}`))
	if !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), `give "trust" only`) {
		t.Errorf("old and new name together: %v", err)
	}
	// A name that was never a field is still refused.
	if _, err := o.Decode([]byte(`{"id":3,"trustlevel":"certain"}`)); !errors.Is(err, core.ErrInvalid) {
		t.Errorf("unknown field: %v", err)
	}
}

// TestExplainDurations: explain writes the durations of its search
// configuration as the configuration file does, never as nanoseconds
// (core.SearchSettings; TestSearchSettingsDurations covers every field).
func TestExplainDurations(t *testing.T) {
	b, err := json.Marshal(NewExplainOut(&core.Explanation{Config: core.DefaultSearchConfig()}))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Config map[string]any `json:"config"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if v := got.Config["recency_half_life"]; v != "720h" {
		t.Errorf("recency_half_life = %#v, want \"720h\" (%s)", v, b)
	}
	if _, ok := got.Config["candidates"].(float64); !ok {
		t.Errorf("the other settings are lost: %s", b)
	}
}

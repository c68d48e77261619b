package backendtest

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/query"
)

func TestEveryMethodIsCovered(t *testing.T) {
	for _, msg := range coverageGaps(cases) {
		t.Error(msg)
	}
}

func TestCoverageGapsReportsMissingAndUnknownClaims(t *testing.T) {
	var trimmed []testCase
	for _, c := range cases {
		c.covers = slices.DeleteFunc(slices.Clone(c.covers), func(m string) bool { return m == "Tx.Touch" })
		trimmed = append(trimmed, c)
	}
	trimmed = append(trimmed, testCase{name: "Bogus", covers: []string{"Tx.Frobnicate"}})
	gaps := coverageGaps(trimmed)
	if len(gaps) != 2 {
		t.Fatalf("coverageGaps = %q, want one message for Tx.Touch and one for Tx.Frobnicate", gaps)
	}
	joined := strings.Join(gaps, "\n")
	for _, want := range []string{"covers Tx.Touch", "claims Tx.Frobnicate"} {
		if !strings.Contains(joined, want) {
			t.Errorf("coverageGaps = %q, want a message containing %q", gaps, want)
		}
	}
}

func TestMethodNames(t *testing.T) {
	names := methodNames()
	for _, want := range []string{
		"Backend.View", "Backend.Update", "Backend.Close", "KeywordIndex.SearchKeyword",
		"ReadTx.Get", "ChangeLog.Seq", "Tx.Insert", "GraphWriter.Link", "AuditReader.Audit",
	} {
		if !slices.Contains(names, want) {
			t.Errorf("methodNames() = %v, missing %s", names, want)
		}
	}
	// Every method appears once, however many interfaces embed it.
	if len(names) != len(slices.Compact(slices.Clone(names))) {
		t.Errorf("methodNames() has duplicates: %v", names)
	}
}

func TestCaseNamesAreUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range cases {
		if seen[c.name] {
			t.Errorf("two cases are named %s", c.name)
		}
		seen[c.name] = true
	}
}

func TestSetPath(t *testing.T) {
	type byName struct {
		Other string
		Path  string
	}
	type byTag struct {
		File string `koanf:"path"`
		Path string `koanf:"other"`
	}
	type noPath struct{ Dir string }

	a := &byName{}
	if err := setPath(a, "/tmp/x"); err != nil || a.Path != "/tmp/x" || a.Other != "" {
		t.Errorf("setPath(byName) = %v, config %+v", err, a)
	}
	b := &byTag{}
	if err := setPath(b, "/tmp/y"); err != nil || b.File != "/tmp/y" || b.Path != "" {
		t.Errorf("setPath(byTag) = %v, config %+v; want the field tagged path set", err, b)
	}
	for _, cfg := range []any{&noPath{}, byName{}, (*byName)(nil), new(int), nil} {
		if err := setPath(cfg, "/tmp/z"); !errors.Is(err, driver.ErrInvalid) {
			t.Errorf("setPath(%T) = %v, want an ErrInvalid error", cfg, err)
		}
	}
}

func TestCheckHitOrder(t *testing.T) {
	for _, c := range []struct {
		hits  []driver.Hit
		limit int
		ok    bool
	}{
		{nil, 10, true},
		{[]driver.Hit{{ID: 5, Score: 3}, {ID: 1, Score: 2}, {ID: 2, Score: 2}}, 3, true},
		{[]driver.Hit{{ID: 1, Score: 2}, {ID: 5, Score: 3}}, 10, false},
		{[]driver.Hit{{ID: 2, Score: 2}, {ID: 1, Score: 2}}, 10, false},
		{[]driver.Hit{{ID: 1, Score: 2}, {ID: 1, Score: 1}}, 10, false},
		{[]driver.Hit{{ID: 1, Score: 2}, {ID: 2, Score: 1}}, 1, false},
	} {
		if err := checkHitOrder(c.hits, c.limit); (err == nil) != c.ok {
			t.Errorf("checkHitOrder(%v, %d) = %v, want ok=%v", c.hits, c.limit, err, c.ok)
		}
	}
}

func TestDiffMemory(t *testing.T) {
	want := fullMemory()
	if d := diffMemory(want, want.Clone()); len(d) > 0 {
		t.Errorf("a clone differs: %v", d)
	}
	bare := newMemory("x")
	emptied := bare.Clone()
	emptied.Entities, emptied.Metadata = []string{}, map[string]any{}
	if d := diffMemory(bare, emptied); len(d) > 0 {
		t.Errorf("nil and empty collections differ: %v", d)
	}
	for name, mutate := range map[string]func(*driver.Memory){
		"local time":       func(m *driver.Memory) { m.CreatedAt = m.CreatedAt.In(time.FixedZone("X", 3600)) },
		"truncated time":   func(m *driver.Memory) { m.UpdatedAt = m.UpdatedAt.Truncate(time.Microsecond) },
		"zero time":        func(m *driver.Memory) { m.ValidTo = time.Time{} },
		"positive zero":    func(m *driver.Memory) { m.Embedding.Vector[2] = 0 },
		"float64 metadata": func(m *driver.Memory) { m.Metadata["count"] = 42 },
		"trust score":      func(m *driver.Memory) { m.Trust.Score = math.Nextafter(m.Trust.Score, 1) },
		"entity order":     func(m *driver.Memory) { slices.Reverse(m.Entities) },
		"access count":     func(m *driver.Memory) { m.AccessCount++ },
	} {
		got := want.Clone()
		mutate(got)
		if d := diffMemory(want, got); len(d) == 0 {
			t.Errorf("diffMemory misses a change: %s", name)
		}
	}
	got := want.Clone()
	got.AccessCount++
	if d := diffMemoryFields(want, got, false); len(d) > 0 {
		t.Errorf("diffMemoryFields without access statistics reports %v", d)
	}
}

func TestContentQuery(t *testing.T) {
	if q := contentQuery(" -- !! "); q != nil {
		t.Errorf("contentQuery of punctuation = %v, want nil", q)
	}
	if q, ok := contentQuery("Café!").(*query.Term); !ok || q.Text != "cafe" || q.Prefix {
		t.Errorf("contentQuery of one word = %#v, want Term cafe", q)
	}
	q, ok := contentQuery("one two three four five six seven eight nine ten").(*query.Phrase)
	if !ok || !slices.Equal(q.Terms, []string{"one", "two", "three", "four", "five", "six", "seven", "eight"}) {
		t.Errorf("contentQuery of ten words = %#v, want a Phrase of the first eight", q)
	}
}

func TestFixtureMemoriesAreValid(t *testing.T) {
	ms := []*driver.Memory{fullMemory(), newMemory("plain")}
	for _, d := range keywordCorpus() {
		ms = append(ms, d.m)
	}
	for _, m := range ms {
		if err := m.Validate(); err != nil {
			t.Errorf("fixture memory %q is invalid: %v", m.Content, err)
		}
	}
}

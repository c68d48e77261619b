package backendtest

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/query"
	"github.com/memos-go/memos/core/text"
)

// base is the suite's reference time: UTC with nanoseconds, so that a backend
// that truncates or shifts times fails.
var base = time.Date(2025, time.March, 14, 15, 9, 26, 535897932, time.UTC)

// at returns base plus n seconds and n nanoseconds, distinct for every n.
func at(n int) time.Time {
	return base.Add(time.Duration(n)*time.Second + time.Duration(n))
}

// newMemory returns a valid version-1 memory with content and defaults for
// every other field; opts adjust it.
func newMemory(content string, opts ...func(*driver.Memory)) *driver.Memory {
	m := &driver.Memory{
		Version:      1,
		Namespace:    driver.DefaultNamespace,
		Pool:         driver.PoolMemory,
		Type:         driver.TypeFact,
		Content:      content,
		Significance: 5,
		Trust:        driver.Trust{Level: driver.TrustCertain, Score: 1},
		CreatedAt:    base,
		UpdatedAt:    base,
		Status:       driver.StatusActive,
	}
	for _, o := range opts {
		o(m)
	}
	return m
}

func withNamespace(ns string) func(*driver.Memory) {
	return func(m *driver.Memory) { m.Namespace = ns }
}
func withPool(p driver.Pool) func(*driver.Memory)  { return func(m *driver.Memory) { m.Pool = p } }
func withType(ty driver.Type) func(*driver.Memory) { return func(m *driver.Memory) { m.Type = ty } }
func withStatus(s driver.Status) func(*driver.Memory) {
	return func(m *driver.Memory) { m.Status = s }
}
func withEmbedding(model string, v ...float32) func(*driver.Memory) {
	return func(m *driver.Memory) { m.Embedding = driver.Embedding{Model: model, Vector: v} }
}

// fullMemory returns a memory with every field set to a value that is easy
// to get wrong: nanosecond UTC times, awkward floats, nested metadata,
// non-ASCII text and an embedding with extreme float32 values.
func fullMemory() *driver.Memory {
	return &driver.Memory{
		Version:          1,
		Namespace:        "project:round-trip",
		Pool:             driver.PoolKnowledge,
		Type:             driver.TypeRelationship,
		Content:          "Zoë's teammate Łukasz maintains the ingest pipeline — 日本語 notes included",
		Significance:     8,
		Entities:         []string{"Zoë", "Łukasz", "ingest pipeline"},
		EmotionalContext: "relieved, a little tired",
		Source:           "conversation:42#turn-7",
		Session:          "run:2025-03-14",
		Trust:            driver.Trust{Level: driver.TrustInferred, Score: 0.7362109375000001},
		ValidFrom:        at(-86400),
		ValidTo:          at(86400),
		CreatedAt:        at(1),
		UpdatedAt:        at(2),
		Status:           driver.StatusQuarantined,
		Metadata: map[string]any{
			"origin":  "import",
			"score":   0.1,
			"big":     1e300,
			"count":   42.0,
			"ok":      true,
			"nothing": nil,
			"tags":    []any{"a", 2.5, false},
			"nested":  map[string]any{"k": "v", "deeper": map[string]any{"n": -7.0}},
			"unicode": "naïve café ☕",
		},
		LastAccessedAt: at(3),
		AccessCount:    3,
		Embedding: driver.Embedding{Model: "test-model-v1", Vector: []float32{
			0.1, -0.25, float32(math.Copysign(0, -1)), 1e-40, math.MaxFloat32,
			-math.SmallestNonzeroFloat32, 1.0 / 3, 123456.789,
		}},
	}
}

// diffMemory lists the fields in which got differs from want. Times must be
// equal instants and in UTC; floats must be bit-identical; a nil and an empty
// slice or map are the same.
func diffMemory(want, got *driver.Memory) []string {
	return diffMemoryFields(want, got, true)
}

// diffMemoryFields is diffMemory, optionally ignoring access statistics.
func diffMemoryFields(want, got *driver.Memory, access bool) []string {
	if got == nil {
		return []string{"memory is nil"}
	}
	var d []string
	add := func(field string, w, g any) { d = append(d, fmt.Sprintf("%s: got %#v, want %#v", field, g, w)) }
	if want.ID != got.ID {
		add("ID", want.ID, got.ID)
	}
	if want.Version != got.Version {
		add("Version", want.Version, got.Version)
	}
	for _, s := range []struct{ name, w, g string }{
		{"Namespace", want.Namespace, got.Namespace},
		{"Pool", string(want.Pool), string(got.Pool)},
		{"Type", string(want.Type), string(got.Type)},
		{"Content", want.Content, got.Content},
		{"EmotionalContext", want.EmotionalContext, got.EmotionalContext},
		{"Source", want.Source, got.Source},
		{"Session", want.Session, got.Session},
		{"Trust.Level", string(want.Trust.Level), string(got.Trust.Level)},
		{"Status", string(want.Status), string(got.Status)},
		{"Embedding.Model", want.Embedding.Model, got.Embedding.Model},
	} {
		if s.w != s.g {
			add(s.name, s.w, s.g)
		}
	}
	if want.Significance != got.Significance {
		add("Significance", want.Significance, got.Significance)
	}
	if !slices.Equal(want.Entities, got.Entities) {
		add("Entities", want.Entities, got.Entities)
	}
	if math.Float64bits(want.Trust.Score) != math.Float64bits(got.Trust.Score) {
		add("Trust.Score", want.Trust.Score, got.Trust.Score)
	}
	times := []struct {
		name string
		w, g time.Time
	}{
		{"ValidFrom", want.ValidFrom, got.ValidFrom},
		{"ValidTo", want.ValidTo, got.ValidTo},
		{"CreatedAt", want.CreatedAt, got.CreatedAt},
		{"UpdatedAt", want.UpdatedAt, got.UpdatedAt},
	}
	if access {
		times = append(times, struct {
			name string
			w, g time.Time
		}{"LastAccessedAt", want.LastAccessedAt, got.LastAccessedAt})
		if want.AccessCount != got.AccessCount {
			add("AccessCount", want.AccessCount, got.AccessCount)
		}
	}
	for _, tm := range times {
		if msg := diffTime(tm.w, tm.g); msg != "" {
			d = append(d, tm.name+": "+msg)
		}
	}
	if !sameMetadata(want.Metadata, got.Metadata) {
		add("Metadata", want.Metadata, got.Metadata)
	}
	if msg := diffVector(want.Embedding.Vector, got.Embedding.Vector); msg != "" {
		d = append(d, "Embedding.Vector: "+msg)
	}
	return d
}

// diffTime says how got differs from want, or "" when it does not.
func diffTime(want, got time.Time) string {
	switch {
	case want.IsZero() && got.IsZero():
		return ""
	case !want.Equal(got):
		return fmt.Sprintf("got %s, want %s", got.Format(time.RFC3339Nano), want.Format(time.RFC3339Nano))
	case got.Location() != time.UTC:
		return fmt.Sprintf("got location %s, want UTC", got.Location())
	}
	return ""
}

func diffVector(want, got []float32) string {
	if len(want) != len(got) {
		return fmt.Sprintf("got %d dimensions, want %d", len(got), len(want))
	}
	for i := range want {
		if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
			return fmt.Sprintf("element %d is %g (bits %#x), want %g (bits %#x)",
				i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
		}
	}
	return ""
}

func sameMetadata(want, got map[string]any) bool {
	if len(want) == 0 && len(got) == 0 {
		return true
	}
	return reflect.DeepEqual(want, got)
}

// diffEdge lists the fields in which got differs from want.
func diffEdge(want, got driver.Edge) []string {
	var d []string
	if want.From != got.From || want.To != got.To || want.Type != got.Type {
		d = append(d, fmt.Sprintf("key: got (%d, %d, %s), want (%d, %d, %s)", got.From, got.To, got.Type, want.From, want.To, want.Type))
	}
	if math.Float64bits(want.Weight) != math.Float64bits(got.Weight) {
		d = append(d, fmt.Sprintf("Weight: got %v, want %v", got.Weight, want.Weight))
	}
	if msg := diffTime(want.CreatedAt, got.CreatedAt); msg != "" {
		d = append(d, "CreatedAt: "+msg)
	}
	if want.Source != got.Source {
		d = append(d, fmt.Sprintf("Source: got %q, want %q", got.Source, want.Source))
	}
	return d
}

// checkEdges fails the test unless got equals want, element by element.
func checkEdges(t interface {
	Helper()
	Errorf(string, ...any)
}, what string, got, want []driver.Edge) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: got %d edges %v, want %d %v", what, len(got), got, len(want), want)
		return
	}
	for i := range want {
		if d := diffEdge(want[i], got[i]); len(d) > 0 {
			t.Errorf("%s: edge %d: %s", what, i, strings.Join(d, "; "))
		}
	}
}

// term, prefix and phrase build query nodes.
func term(s string) *query.Term         { return &query.Term{Text: s} }
func prefix(s string) *query.Term       { return &query.Term{Text: s, Prefix: true} }
func phrase(ts ...string) *query.Phrase { return &query.Phrase{Terms: ts} }

// contentQuery builds a query that a memory's own content must match: a
// Term for one token, else a Phrase of its first tokens. It returns nil for
// content without tokens.
func contentQuery(content string) query.Node {
	toks := text.Tokenize(content)
	switch {
	case len(toks) == 0:
		return nil
	case len(toks) == 1:
		return term(toks[0])
	case len(toks) > 8:
		toks = toks[:8]
	}
	return phrase(toks...)
}

// describe renders q for messages.
func describe(q query.Node) string {
	if q == nil {
		return "nil"
	}
	return q.String()
}

package govern

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/memos-go/memos/core/driver"
)

// The chain's hashes are a stored format: stores written by any memos must
// keep verifying. These pin them.
func TestHashesAreStable(t *testing.T) {
	at := time.Date(2024, 5, 1, 12, 0, 0, 500, time.UTC)
	a := &driver.AuditEntry{Time: at, Action: "remember", MemoryID: 7, Detail: `{"version":1}`, PrevHash: "abc"}
	if got, want := AuditHash(a), auditHashGolden; got != want {
		t.Errorf("AuditHash = %s, want %s", got, want)
	}
	m := &driver.Memory{ID: 7, Version: 1, Namespace: "default", Pool: driver.PoolMemory, Type: driver.TypeFact,
		Content: "Alice lives in Lyon", Significance: 5, Trust: driver.Trust{Level: driver.TrustCertain, Score: 1},
		Status: driver.StatusActive, CreatedAt: at, UpdatedAt: at, Metadata: map[string]any{"n": 2},
		Embedding: driver.Embedding{Model: "hash", Vector: []float32{0.6, 0.8}}}
	if got, want := VersionHash(m), versionHashGolden; got != want {
		t.Errorf("VersionHash = %s, want %s", got, want)
	}
	// Access statistics are not part of a version; metadata counts as read
	// back from JSON; -0 as 0.
	c := m.Clone()
	c.AccessCount, c.LastAccessedAt = 3, at.Add(time.Hour)
	c.Metadata = map[string]any{"n": 2.0}
	if VersionHash(c) != VersionHash(m) {
		t.Error("access statistics or the metadata's number type changed the version hash")
	}
	z, negz := m.Clone(), m.Clone()
	z.Trust.Score, negz.Trust.Score = 0, math.Copysign(0, -1)
	if VersionHash(z) != VersionHash(negz) || !slices.Contains(legacyVersionHashes(z), hashVersion(negz, negz.Embedding.Vector)) {
		t.Error("a trust score of -0 does not hash as 0, or its legacy hash is not accepted")
	}
}

// The values the code before the move to this package computed.
const (
	auditHashGolden   = "42a5e55488fb5d9fe0b76fbae592a67e008a01dddff45b3a9511bb059be28de7"
	versionHashGolden = "9388ae7b5898d8699a6c8c29d2c0f03880b619edd38fb07a0d0983b647ae8bf8"
)

func TestDisagreement(t *testing.T) {
	for _, c := range []struct{ a, b, want string }{
		{"Alice has two cats at home", "Alice has three cats at home", "numbers differ (2 against 3)"},
		{"Alice moved to Lyon in March 2021", "Alice moved to Lyon in June 2021", "dates differ"},
		{"Alice likes green tea", "Alice does not like green tea", "one negates the other"},
		{"Alice likes green tea", "Alice likes green tea", ""},
		{"Alice has two cats", "Bob sold three bicycles yesterday", ""}, // not about the same thing
	} {
		if got := disagreement(c.a, c.b, 0.5); got != c.want {
			t.Errorf("disagreement(%q, %q) = %q, want %q", c.a, c.b, got, c.want)
		}
	}
}

func TestLessonOutcome(t *testing.T) {
	p, err := NewPolicy(Config{})
	if err != nil {
		t.Fatal(err)
	}
	m := &driver.Memory{ID: 1, Type: driver.TypeLesson, Status: driver.StatusActive,
		Trust: driver.Trust{Level: driver.TrustInferred, Score: 0.5}, Significance: 5}
	for i := range 5 {
		m, _ = p.Outcome(m, false, "")
		_, s, f := LessonRecord(m)
		if s != 0 || f != i+1 || m.Trust.Score != LessonScore(0, i+1) {
			t.Fatalf("after %d failures: %d/%d, score %v", i+1, s, f, m.Trust.Score)
		}
		if demoted := m.Trust.Level == driver.TrustContradicted; demoted != (i+1 >= 3) {
			t.Errorf("after %d failures trust level is %s", i+1, m.Trust.Level)
		}
	}
	if m.Status != driver.StatusArchived || m.Significance != 1 {
		t.Errorf("after 5 failures: status %s, significance %d; want archived, 1", m.Status, m.Significance)
	}
	for range 6 {
		m, _ = p.Outcome(m, true, "ok")
	}
	if m.Trust.Level != driver.TrustInferred {
		t.Errorf("a lesson back at score %v is still %s", m.Trust.Score, m.Trust.Level)
	}
}

func TestSourceMatches(t *testing.T) {
	for _, c := range []struct {
		source, s string
		want      bool
	}{
		{"conversation:7", "conversation:7", true},
		{"conversation:7#turn-3", "conversation:7", true},
		{"conversation:70", "conversation:7", false},
		{"web:example.com", "web:", true},
		{"anything", "", false},
	} {
		if got := SourceMatches(c.source, c.s); got != c.want {
			t.Errorf("SourceMatches(%q, %q) = %v", c.source, c.s, got)
		}
	}
}

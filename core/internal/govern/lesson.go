package govern

import (
	"math"

	"github.com/memos-go/memos/core/driver"
)

// Lessons are procedural guidance (type lesson, pool knowledge) whose
// standing follows their outcomes. The rule, a Beta(1,1) prior updated by
// every outcome:
//
//	score        = (successes + 1) / (successes + failures + 2)
//	trust score  = score
//	significance = clamp(round(10 · score), 1, 10)
//
// so a new lesson stands at 0.5 (significance 5), three successes in a row
// raise it to 0.8 (8), three failures lower it to 0.2 (2). A lesson with at
// least governance.lesson_min_outcomes outcomes (3) whose score falls below
// governance.lesson_demote_below (0.35) is demoted to trust level
// contradicted — it then needs a much stronger match to surface — and one
// with at least governance.lesson_archive_outcomes (5) and a score below
// governance.lesson_archive_below (0.2) is archived: kept with its history,
// never silently deleted, invisible to recall. A demoted lesson whose score
// climbs back to 0.5 is inferred again. Each outcome is a new version and
// an audit entry (lesson.outcome, with the note), so history shows why a
// lesson stands where it does.

// Metadata keys of a lesson.
const (
	MetaLessonWhen      = "when"
	MetaLessonSuccesses = "lesson.successes"
	MetaLessonFailures  = "lesson.failures"
)

// LessonScore is the Beta(1,1) posterior mean of a lesson's success rate.
func LessonScore(successes, failures int) float64 {
	return float64(successes+1) / float64(successes+failures+2)
}

// LessonRecord reads lesson m's situation and outcome counts from its
// metadata.
func LessonRecord(m *driver.Memory) (when string, successes, failures int) {
	when, _ = m.Metadata[MetaLessonWhen].(string)
	return when, metaInt(m.Metadata[MetaLessonSuccesses]), metaInt(m.Metadata[MetaLessonFailures])
}

// metaInt reads a count kept in metadata (an int when written, a float64
// after a round trip through JSON).
func metaInt(v any) int {
	switch x := v.(type) {
	case int:
		return x
	case int64:
		return int(x)
	case float64:
		return int(x)
	}
	return 0
}

// Outcome returns the version of lesson cur after an outcome (success or
// not) under the rule above, and the detail of its lesson.outcome audit
// entry (with note, if any). cur must be a lesson.
func (p *Policy) Outcome(cur *driver.Memory, success bool, note string) (*driver.Memory, map[string]any) {
	_, s, f := LessonRecord(cur)
	outcome := "failure"
	if success {
		s++
		outcome = "success"
	} else {
		f++
	}
	score := LessonScore(s, f)
	n := s + f
	next := cur.Clone()
	if next.Metadata == nil {
		next.Metadata = map[string]any{}
	}
	next.Metadata[MetaLessonSuccesses], next.Metadata[MetaLessonFailures] = s, f
	next.Trust.Score = score
	next.Significance = min(10, max(1, int(math.Round(10*score))))
	switch {
	case n >= p.LessonMinOutcomes && score < p.LessonDemoteBelow:
		next.Trust.Level = driver.TrustContradicted
	case next.Trust.Level == driver.TrustContradicted && score >= 0.5:
		next.Trust.Level = driver.TrustInferred
	}
	if n >= p.LessonArchiveOutcomes && score < p.LessonArchiveBelow && next.Status == driver.StatusActive {
		next.Status = driver.StatusArchived
	}
	d := map[string]any{"outcome": outcome, "successes": s, "failures": f, "score": score}
	if note != "" {
		d["note"] = note
	}
	return next, d
}

package core

import (
	"context"
	"sort"
	"strings"

	"github.com/memos-go/memos/core/internal/govern"
)

// Lessons are procedural guidance (type lesson, pool knowledge) whose
// standing follows their outcomes: core/internal/govern holds the rule (a
// Beta(1,1) prior updated by every outcome, demotion and archiving by
// governance settings). Packs rank the lessons that apply by score.

// LessonInput is what Learn stores.
type LessonInput struct {
	// Guidance is what to do (required).
	Guidance string `json:"guidance"`
	// When is the situation the lesson applies to; it is kept in metadata
	// and put in front of the content ("When <situation>: <guidance>") so
	// that searches for the situation find the lesson.
	When         string   `json:"when,omitempty"`
	Source       string   `json:"source,omitempty"`
	Session      string   `json:"session,omitempty"`
	Entities     []string `json:"entities,omitempty"`
	Significance int      `json:"significance,omitempty"`
}

// Lesson is a lesson with its outcome record.
type Lesson struct {
	Memory    *Memory `json:"memory"`
	When      string  `json:"when,omitempty"`
	Successes int     `json:"successes"`
	Failures  int     `json:"failures"`
	Score     float64 `json:"score"`
}

// LessonScore is the Beta(1,1) posterior mean of a lesson's success rate.
func LessonScore(successes, failures int) float64 { return govern.LessonScore(successes, failures) }

// Learn stores a lesson (type lesson, knowledge pool) at the neutral score
// 0.5 with no outcomes yet.
func (e *Engine) Learn(ctx context.Context, in LessonInput) (*Lesson, error) {
	content := strings.TrimSpace(in.Guidance)
	when := strings.TrimSpace(in.When)
	if content != "" && when != "" {
		content = "When " + when + ": " + content
	}
	score := LessonScore(0, 0)
	md := map[string]any{govern.MetaLessonSuccesses: 0, govern.MetaLessonFailures: 0}
	if when != "" {
		md[govern.MetaLessonWhen] = when
	}
	m, err := e.Remember(ctx, Input{Content: content, Type: TypeLesson, Pool: PoolKnowledge, Source: in.Source,
		Session: in.Session, Entities: in.Entities, Significance: in.Significance,
		TrustLevel: TrustInferred, TrustScore: &score, Metadata: md})
	if err != nil {
		if me, ok := err.(*Error); ok {
			me.Op = "learn"
		}
		return nil, err
	}
	return lessonOf(m), nil
}

func lessonOf(m *Memory) *Lesson {
	l := &Lesson{Memory: m}
	l.When, l.Successes, l.Failures = govern.LessonRecord(m)
	l.Score = LessonScore(l.Successes, l.Failures)
	return l
}

// LessonFilter selects lessons for Lessons.
type LessonFilter struct {
	// IncludeArchived also lists archived lessons.
	IncludeArchived bool `json:"include_archived,omitempty"`
}

// Lessons lists the lessons in scope, best score first (ties by id).
func (e *Engine) Lessons(ctx context.Context, f LessonFilter) ([]*Lesson, error) {
	const op = "lessons"
	if err := e.checkOpen(op); err != nil {
		return nil, err
	}
	statuses := []Status{StatusActive, StatusQuarantined}
	if f.IncludeArchived {
		statuses = append(statuses, StatusArchived)
	}
	out := []*Lesson{}
	err := e.b.View(ctx, func(tx ReadTx) error {
		return tx.Scan(ScanOptions{Filter: Filter{Namespaces: e.scope(), Types: []Type{TypeLesson}, Statuses: statuses}}, func(m *Memory) error {
			m.Embedding.Vector = nil
			out = append(out, lessonOf(m))
			return ctx.Err()
		})
	})
	if err != nil {
		return nil, &Error{Op: op, Err: err}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return out[i].Memory.ID < out[j].Memory.ID
	})
	return out, nil
}

// Lesson returns lesson id with its outcome record; ErrInvalid when id is
// not a lesson.
func (e *Engine) Lesson(ctx context.Context, id int64) (*Lesson, error) {
	m, err := e.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if m.Type != TypeLesson {
		return nil, &Error{Op: "lesson", ID: id, Err: notLesson(m)}
	}
	return lessonOf(m), nil
}

func notLesson(m *Memory) error {
	return invalidf("memory %d is a %s, not a lesson; outcomes apply to lessons (memos learn)", m.ID, m.Type)
}

// LessonOutcome records that following lesson id succeeded or failed: a new
// version with the counts, score, significance, trust and status the rule
// above gives, and a lesson.outcome audit entry with note. An outcome for a
// memory that is not a lesson is ErrInvalid and changes nothing.
func (e *Engine) LessonOutcome(ctx context.Context, id int64, success bool, note string) (*Lesson, error) {
	const op = "lesson.outcome"
	if err := e.checkOpen(op); err != nil {
		return nil, err
	}
	if err := checkNote("note", note); err != nil {
		return nil, &Error{Op: op, ID: id, Err: err}
	}
	m, err := e.writeVersionDetail(ctx, op, id, func(cur *Memory) (*Memory, map[string]any, error) {
		if cur.Type != TypeLesson {
			return nil, nil, notLesson(cur)
		}
		next, d := e.gov.Outcome(cur, success, note)
		return next, d, nil
	})
	if err != nil {
		return nil, err
	}
	return lessonOf(m), nil
}

package retrieve

import (
	"math"
	"time"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/query"
	"github.com/memos-go/memos/core/text"
	"github.com/memos-go/memos/core/timeexpr"
)

// This file is the time stage of a search: what the question says about
// time. Package core/timeexpr reads the dates and relative expressions of
// the query ("last weekend", "in May 2023", "two weeks ago") against the
// request's ReferenceTime (default: the search's clock) and recognises
// questions that ask for a time ("when…", "how long ago…", "which … first").
//
//   - The time words leave the keyword query: it is built from the rest, so
//     "last week" does not match every memory that says "week". The words
//     asking for a time go too ("how many days ago"). The vector search
//     embeds the whole question: measured, embedding the rest instead cost
//     LoCoMo recall@10 0.705 → 0.698 and LongMemEval-S 0.813 → 0.805.
//   - A memory whose event time (valid_from, else created_at) falls in a
//     named interval scores ×(1 + TimeBoost), one near it less: the boost
//     halves with every "tolerance" of distance (a quarter of the
//     interval's length, at least 12 hours and at most 15 days; 1 day for
//     open intervals such as "before May").
//   - When the query names a time, each retriever is read TimeCandidates
//     deep, and what it finds there joins the candidates only if its event
//     time is in or near the interval.
//   - When the question asks for a time, a memory whose content itself
//     mentions one ("yesterday", "on 8 May") scores ×(1 + DatedBoost): the
//     turn that answers "when did Caroline go to the support group?" says
//     "I went to the support group yesterday". The dates it mentions are
//     resolved against the memory's event time and returned with the hit
//     (Result.Mentions, the pack's lines).

// QueryTime is what a search read about time in its query.
type QueryTime struct {
	// ReferenceTime is the "now" the expressions were read against.
	ReferenceTime time.Time `json:"reference_time"`
	// Ask says whether the question asks for a time: "when", "how long",
	// "order", or "" when it does not.
	Ask string `json:"ask,omitempty"`
	// Expressions are the time expressions found, with their intervals.
	Expressions []TimeMention `json:"expressions,omitempty"`
}

// TimeMention is a time expression with the interval it denotes,
// [From, To); a zero bound is open ("before May 2023" has no From).
type TimeMention struct {
	Text string    `json:"text"`
	From time.Time `json:"from,omitzero"`
	To   time.Time `json:"to,omitzero"`
}

func mentions(es []timeexpr.Expr) []TimeMention {
	var out []TimeMention
	for _, e := range es {
		out = append(out, TimeMention{Text: e.Text, From: e.From, To: e.To})
	}
	return out
}

// EventTime is when what m records happened: its valid_from, or when memos
// learned it when that is not set.
func EventTime(m *driver.Memory) time.Time {
	if !m.ValidFrom.IsZero() {
		return m.ValidFrom
	}
	return m.CreatedAt
}

// readTime parses the query for time and, when it names or asks for one,
// sets p.tq and the keyword query without the time words. FTS queries are
// exact: they are left alone.
func (p *Pipeline) readTime() {
	if p.mode == ModeFTS || p.cfg.TimeBoost < 0 {
		return
	}
	ref := p.now
	if !p.req.ReferenceTime.IsZero() {
		ref = p.req.ReferenceTime
	}
	q := timeexpr.ParseQuestion(p.req.Query, ref)
	if len(q.Exprs) == 0 && q.Ask == timeexpr.AskNone {
		return
	}
	p.tq = &q
	p.qt = &QueryTime{ReferenceTime: ref, Ask: string(q.Ask), Expressions: mentions(q.Exprs)}
	rest := q.Strip(p.req.Query, true)
	kwq := query.Natural(rest)
	if kwq == nil || !hasContentWord(rest) {
		return // nothing but time words: search for them as written
	}
	if p.mode != ModeVector {
		p.kwq = kwq
	}
}

// hasContentWord reports whether s has a word Natural would search for
// (not only stop words).
func hasContentWord(s string) bool {
	for _, w := range text.Tokenize(s) {
		if !query.IsStopWord(w) {
			return true
		}
	}
	return false
}

// timeDepth is how deep each retriever is read: TimeCandidates when the
// query names a time, else n.
func (p *Pipeline) timeDepth(n int) int {
	if p.tq == nil || len(p.tq.Exprs) == 0 || p.cfg.TimeCandidates <= n {
		return n
	}
	return p.cfg.TimeCandidates
}

// closeness is how near t is to the interval of e: 1 inside, halving with
// every tolerance of distance outside.
func closeness(e timeexpr.Expr, t time.Time) float64 {
	if e.Contains(t) {
		return 1
	}
	tol := 24 * time.Hour
	if e.Bounded() {
		tol = min(max(e.To.Sub(e.From)/4, 12*time.Hour), 15*24*time.Hour)
	}
	var dist time.Duration
	if !e.From.IsZero() && t.Before(e.From) {
		dist = e.From.Sub(t)
	} else {
		dist = t.Sub(e.To)
	}
	return math.Exp2(-float64(dist) / float64(tol))
}

// nearTime is the closeness of m's event time to the question's time
// (the best over its expressions).
func (p *Pipeline) nearTime(m *driver.Memory) float64 {
	t := EventTime(m)
	if t.IsZero() {
		return 0
	}
	best := 0.0
	for _, e := range p.tq.Exprs {
		best = max(best, closeness(e, t))
	}
	return best
}

// keepDeep drops the candidates that only the deeper reading of the
// retrievers found (ranked past head in every list) unless their event
// time is in or near the question's (closeness at least one half).
func (p *Pipeline) keepDeep(head int) {
	if p.tq == nil || p.timeDepth(head) == head {
		return
	}
	out := p.cands[:0]
	for _, c := range p.cands {
		deep := (c.kwRank == 0 || c.kwRank > head) && (c.vecRank == 0 || c.vecRank > head) && c.histRank == 0
		if deep && (c.mem == nil || p.nearTime(c.mem) < 0.5) {
			delete(p.byID, c.id)
			continue
		}
		out = append(out, c)
	}
	clear(p.cands[len(out):])
	p.cands = out
}

// weighTime applies the time factors to a loaded candidate's score.
func (p *Pipeline) weighTime(c *candidate) {
	c.timeFactor = 1
	if p.tq == nil {
		return
	}
	if len(p.tq.Exprs) > 0 && p.cfg.TimeBoost > 0 {
		c.timeFactor *= 1 + p.cfg.TimeBoost*p.nearTime(c.mem)
	}
	if p.tq.Ask != timeexpr.AskNone && p.cfg.DatedBoost > 0 && len(contentTimes(c.mem)) > 0 {
		c.timeFactor *= 1 + p.cfg.DatedBoost
	}
	c.score *= c.timeFactor
}

// contentTimes are the time expressions m's content mentions, resolved
// against its event time.
func contentTimes(m *driver.Memory) []timeexpr.Expr {
	ref := EventTime(m)
	if ref.IsZero() {
		return nil
	}
	return timeexpr.Parse(m.Content, ref)
}

// timeMentions is what a hit carries for a question about time: the dates
// its content mentions, resolved.
func (p *Pipeline) timeMentions(m *driver.Memory) []TimeMention {
	if p.tq == nil || p.tq.Ask == timeexpr.AskNone {
		return nil
	}
	return mentions(contentTimes(m))
}

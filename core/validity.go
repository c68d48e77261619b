package core

import (
	"context"
	"time"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/internal/govern"
	"github.com/memos-go/memos/core/internal/retrieve"
)

// EdgeSupersedes links a memory to the one it replaced (new → old); see
// Engine.Supersede.
const EdgeSupersedes EdgeType = "supersedes"

// SetValidity writes a new version of memory id whose event-time interval
// is [from, to): when what it records was true. A zero from means "since
// always", a zero to "still true". The previous interval stays in History.
func (e *Engine) SetValidity(ctx context.Context, id int64, from, to time.Time) (*Memory, error) {
	const op = "set validity"
	if err := e.checkOpen(op); err != nil {
		return nil, err
	}
	from, to = utc(from), utc(to)
	if !from.IsZero() && !to.IsZero() && !to.After(from) {
		return nil, &Error{Op: op, ID: id, Err: invalidf("valid_to %s is not after valid_from %s", to.Format(time.RFC3339), from.Format(time.RFC3339))}
	}
	p := Patch{ValidFrom: &from, ValidTo: &to}
	return e.writeVersionDetail(ctx, op, id, p.change(nil))
}

// Supersede records that memory old is replaced by a new memory made from
// in, in one transaction: the new memory is stored, valid from in.ValidFrom
// (default now); the old one gets a new version whose validity ends there;
// and an edge new —supersedes→ old links them. History keeps every earlier
// version of the old memory, so searches at an earlier ValidAt or AsOf still
// find it. Fields in leaves zero take the old memory's values (namespace,
// pool, type, significance, emotional context, session, trust); content is
// required. The source and entities are only those in gives (none by
// default), never the old memory's: forget-source of the old memory's
// source must not take the new fact; the supersedes edge links the two. It
// returns the new memory.
func (e *Engine) Supersede(ctx context.Context, old int64, in Input) (*Memory, error) {
	const op = "supersede"
	if err := e.checkOpen(op); err != nil {
		return nil, err
	}
	if err := driver.ValidateContent(in.Content); err != nil {
		return nil, &Error{Op: op, ID: old, Err: err}
	}
	vs, err := e.embed(ctx, []string{in.Content})
	if err != nil {
		return nil, &Error{Op: op, ID: old, Err: err}
	}
	var out *Memory
	err = e.b.Update(ctx, func(tx Tx) error {
		cur, err := e.getWritable(tx, old)
		if err != nil {
			return err
		}
		now := e.clock()
		in := inherit(in, cur)
		if in.ValidFrom.IsZero() {
			in.ValidFrom = now
		}
		m, err := newMemory(in, e.ns, e.only, now)
		if err != nil {
			return err
		}
		if !cur.ValidFrom.IsZero() && !m.ValidFrom.After(cur.ValidFrom) {
			return invalidf("the new memory's valid_from %s is not after memory %d's valid_from %s; give a later --from",
				m.ValidFrom.Format(time.RFC3339), old, cur.ValidFrom.Format(time.RFC3339))
		}
		if vs != nil {
			m.Embedding = Embedding{Model: e.model.ID, Vector: vs[0]}
		}
		if err := tx.Insert(m); err != nil {
			return err
		}
		au := e.auditor(tx)
		d := map[string]any{"namespace": m.Namespace, "status": m.Status, "supersedes": old}
		if m.Source != "" {
			d["source_sha256"] = govern.SourceHash(m.Source)
		}
		if _, err := au.Bind("remember", m, d); err != nil {
			return err
		}
		next := cur.Clone()
		if next.ValidTo.IsZero() || next.ValidTo.After(m.ValidFrom) {
			next.ValidTo = m.ValidFrom
		}
		if !sameVersion(cur, next) {
			if err := e.putVersion(tx, au, "supersede", cur, next, map[string]any{"by": m.ID}); err != nil {
				return err
			}
		}
		if err := tx.Link(Edge{From: m.ID, To: old, Type: EdgeSupersedes, Weight: 1, CreatedAt: now, Source: "supersede"}); err != nil {
			return err
		}
		out = m
		return au.Close()
	})
	if err != nil {
		return nil, &Error{Op: op, ID: old, Err: err}
	}
	e.synced(ctx)
	return out, nil
}

// inherit fills the zero fields of in from the memory it supersedes, but for
// its provenance: source and entities.
func inherit(in Input, old *Memory) Input {
	str := func(dst *string, src string) {
		if *dst == "" {
			*dst = src
		}
	}
	str(&in.Namespace, old.Namespace)
	str(&in.EmotionalContext, old.EmotionalContext)
	str(&in.Session, old.Session)
	if in.Type == "" {
		in.Type = old.Type
	}
	if in.Pool == "" {
		in.Pool = old.Pool
	}
	if in.Significance == 0 {
		in.Significance = old.Significance
	}
	if in.TrustLevel == "" && in.TrustScore == nil {
		in.TrustLevel = old.Trust.Level
		score := old.Trust.Score
		in.TrustScore = &score
	}
	return in
}

// interval renders m's validity interval for messages.
func interval(m *Memory) string { return retrieve.Interval(m) }

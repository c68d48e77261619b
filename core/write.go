package core

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/internal/check"
	"github.com/memos-go/memos/core/internal/govern"
)

// Input is what a caller gives to Remember. Zero fields take defaults:
// Namespace the handle's, Type fact, Pool the type's default pool,
// Significance 5, TrustLevel inferred with its default score, Status active.
type Input struct {
	Content          string
	Namespace        string
	Pool             Pool
	Type             Type
	Significance     int
	Entities         []string
	EmotionalContext string
	Source           string
	Session          string
	TrustLevel       TrustLevel
	TrustScore       *float64 // nil: the level's default score
	ValidFrom        time.Time
	ValidTo          time.Time
	Status           Status
	Metadata         map[string]any
	// Quarantine holds the memory for review (status quarantined) whatever
	// the policy says.
	Quarantine bool
	// Contradicts names memories this one contradicts: each gets a
	// contradicts edge, and the policy (GovernConfig.Contradictions) decides
	// whether the newcomer waits for review or the older one is demoted.
	Contradicts []int64
	// DerivedFrom names memories this one was derived from (a summary, a
	// fact extracted from a turn): each gets a derived_from edge, recorded as
	// provenance, and forget-source follows them.
	DerivedFrom []int64
}

// newMemory builds the validated version-1 memory for in, without id or
// embedding, for a handle of namespace ns that may change only the
// namespaces in only (nil: every one).
func newMemory(in Input, ns string, only []string, now time.Time) (*Memory, error) {
	m := &Memory{
		Version:          1,
		Namespace:        in.Namespace,
		Pool:             in.Pool,
		Type:             in.Type,
		Content:          in.Content,
		Significance:     in.Significance,
		Entities:         cleanEntities(in.Entities),
		EmotionalContext: in.EmotionalContext,
		Source:           in.Source,
		Session:          in.Session,
		Trust:            Trust{Level: in.TrustLevel},
		ValidFrom:        utc(in.ValidFrom),
		ValidTo:          utc(in.ValidTo),
		CreatedAt:        now,
		UpdatedAt:        now,
		Status:           in.Status,
		Metadata:         in.Metadata,
	}
	if m.Namespace == "" {
		m.Namespace = ns
	}
	if only != nil && !slices.Contains(only, m.Namespace) {
		return nil, fmt.Errorf("%w: this caller may not write to namespace %s (it may write to %s)", ErrForbidden, m.Namespace, strings.Join(only, ", "))
	}
	if m.Type == "" {
		m.Type = TypeFact
	}
	if m.Pool == "" {
		if _, err := ParseType(string(m.Type)); err != nil {
			return nil, err
		}
		m.Pool = m.Type.DefaultPool()
	}
	if m.Significance == 0 {
		m.Significance = 5
	}
	if m.Trust.Level == "" {
		m.Trust.Level = TrustInferred
	}
	m.Trust.Score = m.Trust.Level.DefaultScore()
	if in.TrustScore != nil {
		m.Trust.Score = govern.CanonicalFloat(*in.TrustScore) // -0 is stored as 0
	}
	if m.Status == "" {
		m.Status = StatusActive
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	if err := check.Metadata(m.Metadata); err != nil {
		return nil, err
	}
	return m, nil
}

func cleanEntities(in []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, e := range in {
		e = strings.TrimSpace(e)
		if e != "" && !seen[e] {
			seen[e] = true
			out = append(out, e)
		}
	}
	return out
}

func utc(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC().Round(0)
}

func (s *shared) clock() time.Time { return s.now().UTC().Round(0) }

// Remember stores a new memory and returns it with its id.
func (e *Engine) Remember(ctx context.Context, in Input) (*Memory, error) {
	ms, err := e.RememberBatch(ctx, []Input{in})
	if err != nil {
		var me *Error
		if errors.As(err, &me) {
			me.Op = "remember"
		}
		return nil, err
	}
	return ms[0], nil
}

// RememberBatch stores many memories in one transaction: all or none. It is
// the fast path for ingest. Inputs are validated before anything is written;
// the error for an invalid input names its index.
func (e *Engine) RememberBatch(ctx context.Context, ins []Input) ([]*Memory, error) {
	const op = "remember batch"
	if err := e.checkOpen(op); err != nil {
		return nil, err
	}
	now := e.clock()
	ms := make([]*Memory, len(ins))
	texts := make([]string, len(ins))
	for i, in := range ins {
		m, err := newMemory(in, e.ns, e.only, now)
		if err != nil {
			if len(ins) > 1 {
				err = fmt.Errorf("input %d: %w", i, err)
			}
			return nil, &Error{Op: op, Err: err}
		}
		ms[i], texts[i] = m, m.Content
	}
	vecs, err := e.embed(ctx, texts)
	if err != nil {
		return nil, &Error{Op: op, Err: err}
	}
	near := make([][]int64, len(ms))
	for i, m := range ms {
		if vecs != nil {
			m.Embedding = Embedding{Model: e.model.ID, Vector: vecs[i]}
		}
		if near[i], err = e.gov.Candidates(ctx, m, nearest(e.shared, e.scope())); err != nil {
			return nil, &Error{Op: op, Err: err}
		}
	}
	err = e.b.Update(ctx, func(tx Tx) error {
		au := e.auditor(tx)
		au.Batch = len(ms) > 1
		for i, m := range ms {
			if err := e.insert(tx, au, m, ins[i], near[i]); err != nil {
				if len(ins) > 1 {
					err = fmt.Errorf("input %d: %w", i, err)
				}
				return err
			}
		}
		return au.Close()
	})
	if err != nil {
		return nil, &Error{Op: op, Err: err}
	}
	e.synced(ctx)
	return ms, nil
}

// synced brings the vector index up to date after a write that committed.
// A failure (the database unreachable just after the COMMIT) does not fail
// the write: the next search syncs the index first, and a caller told that
// a committed write failed would retry it and store it twice.
func (s *shared) synced(ctx context.Context) {
	if err := s.vec.Sync(ctx); err != nil {
		slog.Warn("memos: the write committed, but bringing the vector index up to date failed; the next search does it", "err", err)
	}
}

// insert stores m (made from in) in tx: it applies the quarantine policy
// and the contradiction policy (near: the detector's candidates), links
// the derived_from and contradicts edges and records provenance.
func (e *Engine) insert(tx Tx, au *auditor, m *Memory, in Input, near []int64) error {
	get := func(id int64) (*Memory, error) { return e.getScoped(tx, id, 0) }
	may := func(old *Memory) bool { return e.mayChange(old.Namespace) }
	verdict, err := e.gov.Judge(tx, m, in.Quarantine, in.Contradicts, near, get, may)
	if err != nil {
		return err
	}
	if len(verdict.Reasons) > 0 && m.Status == StatusActive {
		m.Status = StatusQuarantined
	}
	for _, id := range in.DerivedFrom {
		if _, err := e.getScoped(tx, id, 0); err != nil {
			return fmt.Errorf("derived from %d: %w", id, err)
		}
	}
	if err := tx.Insert(m); err != nil {
		return err
	}
	for _, c := range verdict.Conflicts {
		src := "contradiction detector: " + c.Why
		if c.Stated {
			src = "stated by the writer"
		}
		if err := tx.Link(Edge{From: m.ID, To: c.ID, Type: EdgeContradicts, Weight: 1, CreatedAt: m.CreatedAt, Source: src}); err != nil {
			return err
		}
		if c.Demote {
			old, err := tx.Get(c.ID, 0)
			if err != nil {
				return err
			}
			next := old.Clone()
			next.Trust = Trust{Level: TrustContradicted, Score: min(old.Trust.Score, TrustContradicted.DefaultScore())}
			if err := e.putVersion(tx, au, "contradicted", old, next, map[string]any{"by": m.ID, "why": c.Why}); err != nil {
				return err
			}
		}
	}
	contradicts := verdict.Detail()
	for _, id := range slices.Compact(slices.Sorted(slices.Values(in.DerivedFrom))) {
		if id == m.ID {
			continue
		}
		if err := tx.Link(Edge{From: m.ID, To: id, Type: EdgeDerivedFrom, Weight: 1, CreatedAt: m.CreatedAt, Source: m.Source}); err != nil {
			return err
		}
	}
	detail := map[string]any{"namespace": m.Namespace, "status": m.Status}
	if m.Source != "" {
		detail["source_sha256"] = govern.SourceHash(m.Source)
	}
	if len(in.DerivedFrom) > 0 {
		detail["derived_from"] = in.DerivedFrom
	}
	if len(contradicts) > 0 {
		detail["contradicts"] = contradicts
	}
	if err := au.Stage("remember", m, detail); err != nil {
		return err
	}
	if m.Status == StatusQuarantined {
		d := map[string]any{"reasons": verdict.Reasons}
		if len(contradicts) > 0 {
			d["contradicts"] = contradicts
		}
		if _, err := au.Bind("quarantine", m, d); err != nil {
			return err
		}
	}
	return nil
}

// embed embeds texts with the engine's embedder in batches of at most
// MaxBatch, a few batches at a time, and returns unit-length vectors. It
// returns nil, nil when the engine has no embedder.
func (s *shared) embed(ctx context.Context, texts []string) ([][]float32, error) {
	if s.emb == nil || len(texts) == 0 {
		return nil, nil
	}
	size := s.model.MaxBatch
	if size <= 0 || size > 256 {
		size = 256
	}
	out := make([][]float32, len(texts))
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	sem := make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))
	var wg sync.WaitGroup
	for start := 0; start < len(texts); start += size {
		end := min(start+size, len(texts))
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			vs, err := s.emb.Embed(ctx, texts[start:end])
			if err == nil {
				err = check.Vectors(s.model, vs, end-start)
			}
			if err != nil {
				cancel(err)
				return
			}
			copy(out[start:end], vs)
		}()
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, fmt.Errorf("embed with %s: %w", s.model.ID, err)
	}
	return out, nil
}

// Get returns the current version of memory id, or ErrNotFound if it does
// not exist or is outside this handle's scope.
func (e *Engine) Get(ctx context.Context, id int64) (*Memory, error) {
	return e.GetVersion(ctx, id, 0)
}

// GetVersion returns version v of memory id (0 for the current one).
func (e *Engine) GetVersion(ctx context.Context, id int64, v int) (*Memory, error) {
	const op = "get"
	if err := e.checkOpen(op); err != nil {
		return nil, err
	}
	var m *Memory
	err := e.b.View(ctx, func(tx ReadTx) error {
		var err error
		m, err = e.getScoped(tx, id, v)
		return err
	})
	if err != nil {
		return nil, &Error{Op: op, ID: id, Err: err}
	}
	if v == 0 && e.access != nil {
		e.access.overlay(m) // accesses not written yet
	}
	return m, nil
}

// History returns every version of memory id, oldest first.
func (e *Engine) History(ctx context.Context, id int64) ([]*Memory, error) {
	const op = "history"
	if err := e.checkOpen(op); err != nil {
		return nil, err
	}
	var hs []*Memory
	err := e.b.View(ctx, func(tx ReadTx) error {
		if _, err := e.getScoped(tx, id, 0); err != nil {
			return err
		}
		var err error
		hs, err = tx.History(id)
		return err
	})
	if err != nil {
		return nil, &Error{Op: op, ID: id, Err: err}
	}
	return hs, nil
}

// Patch is a change to a memory; nil fields are left as they are.
type Patch struct {
	Content          *string
	Type             *Type
	Pool             *Pool
	Significance     *int
	Entities         *[]string
	EmotionalContext *string
	Source           *string
	Session          *string
	TrustLevel       *TrustLevel
	TrustScore       *float64
	ValidFrom        *time.Time
	ValidTo          *time.Time
	Status           *Status
	Metadata         *map[string]any
	// MergeMetadata changes the metadata key by key, after Metadata: a key
	// with a value is set, a key with a nil value is removed.
	MergeMetadata map[string]any
}

func (p *Patch) apply(m *Memory) {
	set := func(dst *string, src *string) {
		if src != nil {
			*dst = *src
		}
	}
	set(&m.Content, p.Content)
	set(&m.EmotionalContext, p.EmotionalContext)
	set(&m.Source, p.Source)
	set(&m.Session, p.Session)
	if p.Type != nil {
		m.Type = *p.Type
	}
	if p.Pool != nil {
		m.Pool = *p.Pool
	}
	if p.Significance != nil {
		m.Significance = *p.Significance
	}
	if p.Entities != nil {
		m.Entities = cleanEntities(*p.Entities)
	}
	if p.TrustLevel != nil {
		m.Trust.Level = *p.TrustLevel
		m.Trust.Score = p.TrustLevel.DefaultScore()
	}
	if p.TrustScore != nil {
		m.Trust.Score = govern.CanonicalFloat(*p.TrustScore)
	}
	if p.ValidFrom != nil {
		m.ValidFrom = utc(*p.ValidFrom)
	}
	if p.ValidTo != nil {
		m.ValidTo = utc(*p.ValidTo)
	}
	if p.Status != nil {
		m.Status = *p.Status
	}
	if p.Metadata != nil {
		m.Metadata = *p.Metadata
	}
	if len(p.MergeMetadata) > 0 {
		md := make(map[string]any, len(m.Metadata)+len(p.MergeMetadata))
		maps.Copy(md, m.Metadata)
		for k, v := range p.MergeMetadata {
			if v == nil {
				delete(md, k)
			} else {
				md[k] = v
			}
		}
		m.Metadata = md
	}
}

// Update writes a new version of memory id with p applied and returns it.
// The previous version stays in History. A patch that changes nothing
// writes nothing and returns the current version.
func (e *Engine) Update(ctx context.Context, id int64, p Patch) (*Memory, error) {
	const op = "update"
	if err := e.checkOpen(op); err != nil {
		return nil, err
	}
	var emb *Embedding
	if p.Content != nil {
		if err := driver.ValidateContent(*p.Content); err != nil {
			return nil, &Error{Op: op, ID: id, Err: err}
		}
		vs, err := e.embed(ctx, []string{*p.Content})
		if err != nil {
			return nil, &Error{Op: op, ID: id, Err: err}
		}
		if vs != nil {
			emb = &Embedding{Model: e.model.ID, Vector: vs[0]}
		}
	}
	return e.writeVersionDetail(ctx, op, id, p.change(emb))
}

// change is the change (see writeVersionDetail) that applies p to the
// current version and, if emb is not nil, gives it emb.
func (p Patch) change(emb *Embedding) func(cur *Memory) (*Memory, map[string]any, error) {
	return func(cur *Memory) (*Memory, map[string]any, error) {
		next := cur.Clone()
		p.apply(next)
		if emb != nil {
			next.Embedding = *emb
		}
		return next, nil, nil
	}
}

// Revert writes a new version of memory id equal to its version v (content
// and attributes; access statistics are kept) and returns it.
func (e *Engine) Revert(ctx context.Context, id int64, v int) (*Memory, error) {
	const op = "revert"
	if err := e.checkOpen(op); err != nil {
		return nil, err
	}
	old, err := e.GetVersion(ctx, id, v)
	if err != nil {
		return nil, &Error{Op: op, ID: id, Err: unwrapOp(err)}
	}
	if e.emb != nil && old.Embedding.Model != e.model.ID {
		// The old version was embedded by a previous model: embed it anew.
		vs, err := e.embed(ctx, []string{old.Content})
		if err != nil {
			return nil, &Error{Op: op, ID: id, Err: err}
		}
		old.Embedding = Embedding{Model: e.model.ID, Vector: vs[0]}
	}
	return e.writeVersionDetail(ctx, op, id, func(cur *Memory) (*Memory, map[string]any, error) {
		if v == cur.Version {
			return nil, nil, invalidf("version %d is already the current version of memory %d", v, id)
		}
		next := old.Clone()
		next.LastAccessedAt, next.AccessCount = cur.LastAccessedAt, cur.AccessCount
		return next, nil, nil
	})
}

// writeVersionDetail reads the current version of id, asks change for the
// next one (and details for the audit entry) and writes it as version
// current+1, all in one transaction, with an audit entry (action op)
// binding it. When the next version equals the current one nothing is
// written.
func (e *Engine) writeVersionDetail(ctx context.Context, op string, id int64, change func(cur *Memory) (*Memory, map[string]any, error)) (*Memory, error) {
	var out *Memory
	err := e.b.Update(ctx, func(tx Tx) error {
		cur, err := e.getWritable(tx, id)
		if err != nil {
			return err
		}
		next, detail, err := change(cur)
		if err != nil {
			return err
		}
		if err := next.Validate(); err != nil {
			return err
		}
		if err := check.Metadata(next.Metadata); err != nil {
			return err
		}
		if sameVersion(cur, next) {
			out = cur
			return nil
		}
		au := e.auditor(tx)
		if err := e.putVersion(tx, au, op, cur, next, detail); err != nil {
			return err
		}
		out = next
		return au.Close()
	})
	if err != nil {
		return nil, &Error{Op: op, ID: id, Err: err}
	}
	e.synced(ctx)
	return out, nil
}

// putVersion writes next as the version after cur, stamping its id,
// version number and times, and appends an audit entry (action op) that
// binds it, says what changed and carries detail.
func (e *Engine) putVersion(tx Tx, au *auditor, op string, cur, next *Memory, detail map[string]any) error {
	next.ID, next.Version = cur.ID, cur.Version+1
	next.CreatedAt, next.UpdatedAt = cur.CreatedAt, e.clock()
	if !next.UpdatedAt.After(cur.UpdatedAt) {
		// Versions are ordered by ingest time; keep that true under a coarse clock.
		next.UpdatedAt = cur.UpdatedAt.Add(time.Microsecond)
	}
	if err := tx.Put(next); err != nil {
		return err
	}
	d := govern.Changes(cur, next)
	maps.Copy(d, detail)
	_, err := au.Bind(op, next, d)
	return err
}

// sameVersion reports whether next records nothing new compared with cur.
func sameVersion(cur, next *Memory) bool {
	a, b := *cur, *next
	a.Embedding.Vector, b.Embedding.Vector = nil, nil
	aj, err1 := json.Marshal(a)
	bj, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(aj) == string(bj) &&
		cur.Embedding.Model == next.Embedding.Model && slices.Equal(cur.Embedding.Vector, next.Embedding.Vector)
}

// unwrapOp strips an *Error so that an inner operation's error can be
// reported under the outer operation's name.
func unwrapOp(err error) error {
	var me *Error
	if errors.As(err, &me) {
		return me.Err
	}
	return err
}

// Link adds (or replaces) a typed edge from → to. Both memories must exist
// and be in this handle's scope; on a limited handle the edge belongs to
// from, which must be in its namespaces (see Limit). Weight 0 means 1. The
// type must be known (see KnownEdgeTypes): a misspelt type is ErrInvalid,
// not a new type.
func (e *Engine) Link(ctx context.Context, edge Edge) (*Edge, error) {
	const op = "link"
	if err := e.checkOpen(op); err != nil {
		return nil, err
	}
	if err := check.Edge(&edge); err != nil {
		return nil, &Error{Op: op, ID: edge.From, Err: err}
	}
	if err := checkEdgeType(e.KnownEdgeTypes(), edge.Type); err != nil {
		return nil, &Error{Op: op, ID: edge.From, Err: err}
	}
	edge.CreatedAt = e.clock()
	err := e.b.Update(ctx, func(tx Tx) error {
		if _, err := e.getWritable(tx, edge.From); err != nil {
			return err
		}
		if _, err := e.getScoped(tx, edge.To, 0); err != nil {
			return err
		}
		if err := tx.Link(edge); err != nil {
			return err
		}
		au := e.auditor(tx)
		au.At(edge.CreatedAt)
		d := map[string]any{"to": edge.To, "type": edge.Type, "weight": edge.Weight}
		if edge.Source != "" {
			d["source_sha256"] = govern.SourceHash(edge.Source)
		}
		if _, err := au.Add("link", edge.From, d); err != nil {
			return err
		}
		return au.Close()
	})
	if err != nil {
		return nil, &Error{Op: op, ID: edge.From, Err: err}
	}
	return &edge, nil
}

// KnownEdgeTypes lists, sorted, the edge types Link accepts: the built-in
// ones (relates_to, supports, contradicts, derived_from, temporal_precedes
// and supersedes, which Supersede writes) and those the configuration
// declares by giving them a weight in SearchConfig.EdgeFactors. Edges of
// other types already in a store (written before types were checked, or
// restored by Import) are still read, weighed like any unlisted type, and
// can be removed with Unlink.
func (e *Engine) KnownEdgeTypes() []EdgeType {
	types := []EdgeType{EdgeSupersedes}
	for t := range e.ret.Config.EdgeFactors {
		if EdgeType(t) != EdgeSupersedes {
			types = append(types, EdgeType(t))
		}
	}
	slices.Sort(types)
	return types
}

// checkEdgeType checks that Link may write an edge of type t, one of known
// (KnownEdgeTypes).
func checkEdgeType(known []EdgeType, t EdgeType) error {
	if slices.Contains(known, t) {
		return nil
	}
	var names []string
	for _, k := range known {
		names = append(names, string(k))
	}
	return invalidf("unknown edge type %q (known: %s); to use a new type, declare it with its weight in graph expansion under search.edge_factors in the configuration",
		t, strings.Join(names, ", "))
}

// Unlink removes the edge (from, to, t); on a limited handle, from must be
// in its namespaces.
func (e *Engine) Unlink(ctx context.Context, from, to int64, t EdgeType) error {
	const op = "unlink"
	if err := e.checkOpen(op); err != nil {
		return err
	}
	err := e.b.Update(ctx, func(tx Tx) error {
		if _, err := e.getWritable(tx, from); err != nil {
			return err
		}
		if err := tx.Unlink(from, to, t); err != nil {
			return err
		}
		au := e.auditor(tx)
		if _, err := au.Add("unlink", from, map[string]any{"to": to, "type": t}); err != nil {
			return err
		}
		return au.Close()
	})
	if err != nil {
		return &Error{Op: op, ID: from, Err: err}
	}
	return nil
}

// Edges returns the edges that start or end at memory id and whose other
// end this handle can read: an edge to a memory of another namespace is
// left out, like the memory itself.
func (e *Engine) Edges(ctx context.Context, id int64) ([]Edge, error) {
	const op = "edges"
	if err := e.checkOpen(op); err != nil {
		return nil, err
	}
	var out []Edge
	err := e.b.View(ctx, func(tx ReadTx) error {
		if _, err := e.getScoped(tx, id, 0); err != nil {
			return err
		}
		all, err := tx.Edges(id)
		if err != nil {
			return err
		}
		out = all[:0]
		for _, ed := range all {
			other := ed.To
			if other == id {
				other = ed.From
			}
			switch _, err := e.getScoped(tx, other, 0); {
			case err == nil:
				out = append(out, ed)
			case !errors.Is(err, ErrNotFound):
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, &Error{Op: op, ID: id, Err: err}
	}
	return out, nil
}

// DeletionCertificate records that a memory was forgotten. It carries a
// SHA-256 of the forgotten content and one of its source (so a holder of
// either can check that this is what was deleted) but never the content or
// the source itself: a source such as "file:divorce-notes.md" can say as
// much as the content, and the certificate stays in the audit log for good.
type DeletionCertificate struct {
	MemoryID    int64     `json:"memory_id"`
	Versions    int       `json:"versions"`
	Edges       int       `json:"edges"`
	ContentHash string    `json:"content_sha256"`
	Namespace   string    `json:"namespace"`
	SourceHash  string    `json:"source_sha256,omitempty"` // SHA-256 of the source, "" when it had none
	Reason      string    `json:"reason,omitempty"`
	Time        time.Time `json:"time"`
	AuditSeq    uint64    `json:"audit_seq"`
	AuditHash   string    `json:"audit_hash"`
	// ErasureStatus says what is left of the content's bytes. It is not
	// part of the audit entry, which is written before the erasure.
	ErasureStatus
}

// ErasureStatus is what a deletion certificate says about the forgotten
// content's bytes after the forget, in the backend's words (see
// ErasureReporter).
type ErasureStatus struct {
	// Erasure sums it up: ErasureComplete when no byte of the content is
	// left in the store; ErasurePending while some are, which the backend
	// removes by itself (for a file store: once no reader of an older
	// snapshot uses them, at the latest when the store is next opened; see
	// WaitErased); ErasureIncomplete when some stay in the store, or in
	// copies it made, until an operator removes them; ErasureUnknown when
	// the backend does not say. Copies outside the store (the file system's
	// old blocks and snapshots, backups of its files) are out of reach of
	// every backend and never counted.
	Erasure string `json:"erasure,omitempty"`
	// ErasureDone lists what was done to remove the bytes.
	ErasureDone []string `json:"erasure_done,omitempty"`
	// ErasurePending lists what is left that the backend or its server
	// removes by itself later.
	ErasurePending []string `json:"erasure_pending,omitempty"`
	// ErasureOutOfReach lists what is left that only an operator can
	// remove, and how.
	ErasureOutOfReach []string `json:"erasure_out_of_reach,omitempty"`
}

// Values of ErasureStatus.Erasure.
const (
	ErasureComplete   = "complete"
	ErasurePending    = "pending"
	ErasureIncomplete = "incomplete"
	ErasureUnknown    = "unknown"
)

// Forget removes every version, index entry, vector and edge of memory id
// and records a deletion certificate in the audit log. The id is never
// reused. The certificate's ErasureStatus says what is left of the
// content's bytes; WaitErased waits for what is pending.
func (e *Engine) Forget(ctx context.Context, id int64, reason string) (*DeletionCertificate, error) {
	const op = "forget"
	if err := e.checkOpen(op); err != nil {
		return nil, err
	}
	if !utf8.ValidString(reason) || len(reason) > 4096 {
		return nil, &Error{Op: op, ID: id, Err: invalidf("reason must be valid UTF-8 of at most 4096 bytes")}
	}
	var cert *DeletionCertificate
	err := e.b.Update(ctx, func(tx Tx) error {
		au := e.auditor(tx)
		var err error
		if cert, err = e.forgetTx(tx, au, "forget", id, reason, nil); err != nil {
			return err
		}
		return au.Close()
	})
	if err != nil {
		return nil, &Error{Op: op, ID: id, Err: err}
	}
	if err := e.vec.Forgotten(ctx); err != nil {
		return nil, &Error{Op: op, ID: id, Err: err}
	}
	cert.ErasureStatus = e.Erasure(ctx)
	return cert, nil
}

// Erasure reports what is left of the content of the memories forgotten so
// far through this engine's store, as their deletion certificates say it:
// after WaitErased, for instance, it tells what the wait achieved. A
// backend that does not report it (ErasureReporter) is answered with
// ErasureUnknown, or, if it implements Eraser, with ErasureComplete or
// ErasurePending as that says.
func (e *Engine) Erasure(ctx context.Context) ErasureStatus {
	if r, ok := e.b.(ErasureReporter); ok {
		er, err := r.Erasure(ctx)
		if err != nil {
			return ErasureStatus{Erasure: ErasureUnknown, ErasureOutOfReach: []string{
				fmt.Sprintf("the backend could not say what the forget left of the content (%v); assume that any of it may remain", err)}}
		}
		rep := ErasureStatus{Erasure: ErasureComplete, ErasureDone: er.Done, ErasurePending: er.Pending, ErasureOutOfReach: er.OutOfReach}
		switch {
		case len(er.OutOfReach) > 0:
			rep.Erasure = ErasureIncomplete
		case len(er.Pending) > 0:
			rep.Erasure = ErasurePending
		}
		return rep
	}
	if er, ok := e.b.(Eraser); ok {
		// The backend's Update has already waited a little for readers.
		if done, err := er.Erase(ctx, 0); err != nil || !done {
			return ErasureStatus{Erasure: ErasurePending}
		}
		return ErasureStatus{Erasure: ErasureComplete}
	}
	return ErasureStatus{Erasure: ErasureUnknown, ErasureOutOfReach: []string{
		"the backend does not say what its delete leaves of the content in its files; assume that any of it may remain"}}
}

// WaitErased waits until the backend has done what it erases by itself of
// every forgotten memory (see Eraser), or ctx is done. Erasure is pending
// after Forget while a reader of an older snapshot still uses those bytes
// (for SQLite, a read transaction in another process). It returns nil
// once nothing is pending, and an error wrapping ctx's error if it is
// still pending when ctx ends; the backend then completes it later by
// itself. What a backend cannot erase by itself (ErasureIncomplete) stays:
// Erasure then tells what is left.
func (e *Engine) WaitErased(ctx context.Context) error {
	const op = "wait for erasure"
	if err := e.checkOpen(op); err != nil {
		return err
	}
	er, ok := e.b.(Eraser)
	if !ok {
		return nil
	}
	for {
		// Wait in steps, so that a reader that ends is noticed soon even
		// when the backend cannot be woken by it.
		wait := time.Second
		if dl, ok := ctx.Deadline(); ok {
			wait = max(0, min(wait, time.Until(dl)))
		}
		done, err := er.Erase(ctx, wait)
		if err == nil && done {
			return nil
		}
		select {
		case <-ctx.Done():
			msg := "a reader of an older snapshot still uses the forgotten bytes"
			if err != nil {
				msg = err.Error()
			}
			return &Error{Op: op, Err: fmt.Errorf("erasure still pending (%s); it completes once the readers end, at the latest when the store is next opened: %w", msg, ctx.Err())}
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// forgetTx deletes memory id in tx and appends its deletion certificate to
// the audit log as an entry of action (forget, quarantine.reject), with
// extra fields in its detail.
func (e *Engine) forgetTx(tx Tx, au *auditor, action string, id int64, reason string, extra map[string]any) (*DeletionCertificate, error) {
	cur, err := e.getWritable(tx, id)
	if err != nil {
		return nil, err
	}
	hist, err := tx.History(id)
	if err != nil {
		return nil, err
	}
	edges, err := tx.Edges(id)
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	for _, v := range hist {
		fmt.Fprintf(h, "%d:%d:%s\n", v.Version, len(v.Content), v.Content)
	}
	cert := &DeletionCertificate{
		MemoryID: id, Versions: len(hist), Edges: len(edges),
		ContentHash: hex.EncodeToString(h.Sum(nil)),
		Namespace:   cur.Namespace, SourceHash: govern.SourceHash(cur.Source), Reason: reason, Time: e.clock(),
	}
	if err := tx.Delete(id); err != nil {
		return nil, err
	}
	b, err := json.Marshal(cert)
	if err != nil {
		return nil, err
	}
	var detail map[string]any
	if err := json.Unmarshal(b, &detail); err != nil {
		return nil, err
	}
	au.At(cert.Time)
	delete(detail, "audit_seq") // the entry's own place, known only once appended
	delete(detail, "audit_hash")
	maps.Copy(detail, extra)
	entry, err := au.Add(action, id, detail)
	if err != nil {
		return nil, err
	}
	cert.AuditSeq, cert.AuditHash = entry.Seq, entry.Hash
	return cert, nil
}

package core

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/memos-go/memos/core/internal/consolidate"
	"github.com/memos-go/memos/core/internal/govern"
	"github.com/memos-go/memos/core/internal/migrate"
	"github.com/memos-go/memos/core/internal/retrieve"
	"github.com/memos-go/memos/core/internal/vecsync"
	"github.com/memos-go/memos/core/vector"
)

// Options configure an Engine. The zero value of every field but Backend is
// usable.
type Options struct {
	// Backend is the store of record; the engine takes ownership and closes it.
	Backend Backend
	// Embedder embeds content and queries; the engine closes it if it is an
	// io.Closer. Nil means no vectors: keyword search only.
	Embedder Embedder
	// Namespace scopes writes and reads; "" means DefaultNamespace. A scoped
	// read returns this namespace and the shared default one, nothing else.
	Namespace string
	// VectorIndex names a registered vector index ("exact", "hnsw"), or
	// "auto": exact while the store holds fewer than HNSWThreshold vectors,
	// hnsw from there on. The switch happens while the engine is open, when
	// a store grows past the threshold or is opened past it with no graph
	// saved: the graph is built in the background and searches use the
	// exact index until it replaces it. "" means "exact".
	VectorIndex string
	// HNSWThreshold is where "auto" switches to hnsw (0: DefaultHNSWThreshold).
	// With VectorSnapshot set the graph is saved on Close and later opens
	// load it instead of building it again.
	HNSWThreshold int
	// VectorPrecision is how the vector index stores vectors in memory and
	// in the snapshot: "float32" (the default, "") or "int8", which takes
	// about a quarter of the vectors' memory for scores off by a few
	// thousandths (see the README's Vector index section). A snapshot saved
	// at another precision is not used: the index is rebuilt from the store,
	// whose vectors stay float32.
	VectorPrecision string
	// Search holds ranking weights and thresholds; zero fields take defaults.
	Search SearchConfig
	// Govern is the governance policy (review queue, contradictions,
	// lessons); zero fields take defaults.
	Govern GovernConfig
	// AllowModelChange opens a store whose vectors were made by another
	// embedding model without failing (used by re-embedding); searches then
	// only see memories already embedded with the current model.
	AllowModelChange bool
	// Now is the clock; nil means time.Now. Tests set it.
	Now func() time.Time
	// EmbedCacheSize bounds the in-memory embedding cache, in vectors (see
	// EmbedCacheStats); 0 means DefaultEmbedCacheSize, negative turns it off.
	EmbedCacheSize int
	// VectorSnapshot is a file where the engine keeps a snapshot of its
	// vector index between runs (written on Close, removed by Forget), so
	// that opening a large store does not re-read every vector; "" means none.
	// Front-ends use the store's path + ".vectors". With "" on a backend
	// that keeps blobs (driver.BlobWriter: postgres) the snapshot is kept in
	// the store itself, shared by every process on every host that opens
	// it; the opening process replays the change log written since it was
	// saved, so writes of other processes after it are never missed.
	VectorSnapshot string
	// Summarizer writes knowledge pages (Consolidate with Pages); nil means
	// no pages. The engine closes it if it is an io.Closer.
	Summarizer Summarizer
	// Consolidate holds consolidation's thresholds; zero fields take defaults.
	Consolidate ConsolidateConfig
	// Extractor proposes memories from captured conversations (Capture);
	// nil means Capture stores the turns only. The engine closes it if it
	// is an io.Closer.
	Extractor Extractor
	// Reranker reorders the best search candidates (see
	// SearchConfig.RerankTop); nil means no reranking. The engine closes it
	// if it is an io.Closer.
	Reranker Reranker
}

// Engine is memos' public Go API: one engine per store, shared by every
// front-end. It is safe for concurrent use; see In for scoped handles.
type Engine struct {
	*shared
	reach // the namespaces this handle reads and may change
}

// shared is the state every handle of one store has in common.
type shared struct {
	b          Backend
	emb        Embedder
	extractor  Extractor  // nil: Capture stores turns only
	summarizer Summarizer // nil: no knowledge pages
	// ret is retrieval's state: the search configuration, the reranker and
	// its breaker, the session index.
	ret         *retrieve.State
	consolidate ConsolidateConfig
	model       ModelInfo // zero when emb is nil
	gov         *govern.Policy
	now         func() time.Time
	closed      atomic.Bool

	// vec is the vector index with its snapshot, its background sync and
	// the switch to HNSW. It is there without an embedder too, holding no
	// vectors (Forget still removes the snapshot file): test emb, not vec,
	// for "no vectors".
	vec *vecsync.Index

	access *accessLog // pending access statistics (nil: not tracked)
}

// Meta keys the engine keeps in the store.
const (
	metaModel     = "embedder.model"
	metaDim       = "embedder.dim"
	metaAuditHead = govern.MetaHead
	// metaAuditSince is when the engine began binding every version it
	// writes to an audit entry; versions written before (by an older memos)
	// are not required to be bound.
	metaAuditSince = govern.MetaSince
)

// Open opens an engine over opts.Backend. It checks that the embedder's
// model matches the one the store was built with (ErrModelMismatch names
// both otherwise) and loads the vector index from the store.
func Open(ctx context.Context, opts Options) (*Engine, error) {
	if opts.Backend == nil {
		return nil, &Error{Op: "open", Err: invalidf("no backend given")}
	}
	ns := opts.Namespace
	if ns == "" {
		ns = DefaultNamespace
	}
	if err := ValidateNamespace(ns); err != nil {
		return nil, &Error{Op: "open", Err: err}
	}
	s := &shared{b: opts.Backend, emb: opts.Embedder, now: opts.Now,
		extractor: opts.Extractor, summarizer: opts.Summarizer, consolidate: consolidate.Defaults(opts.Consolidate)}
	if s.now == nil {
		s.now = time.Now
	}
	ret, err := retrieve.NewState(opts.Search, opts.Reranker)
	if err != nil {
		return nil, &Error{Op: "open", Err: err}
	}
	s.ret = ret
	prec, err := vector.ParsePrecision(opts.VectorPrecision)
	if err != nil {
		return nil, &Error{Op: "open", Err: err}
	}
	if err := consolidate.Validate(s.consolidate); err != nil {
		return nil, &Error{Op: "open", Err: err}
	}
	if s.gov, err = govern.NewPolicy(opts.Govern); err != nil {
		return nil, &Error{Op: "open", Err: err}
	}
	if err := migrate.Check(ctx, s.b); err != nil {
		return nil, &Error{Op: "open", Err: err}
	}
	if s.emb != nil {
		info, err := s.emb.Info(ctx)
		if err != nil {
			return nil, &Error{Op: "open", Err: fmt.Errorf("embedder info: %w", err)}
		}
		if info.ID == "" || info.Dim <= 0 {
			return nil, &Error{Op: "open", Err: invalidf("embedder reports model %q with %d dimensions", info.ID, info.Dim)}
		}
		s.model = info
		s.emb = withEmbedCache(s.emb, info, opts.EmbedCacheSize)
		if err := checkModel(ctx, s.b, info, opts.AllowModelChange); err != nil {
			return nil, &Error{Op: "open", Err: err}
		}
	}
	if s.vec, err = openVectors(ctx, s.b, s.model, opts, prec); err != nil {
		return nil, &Error{Op: "open", Err: err}
	}
	if !s.ret.Config.DisableAccessTracking {
		s.access = newAccessLog(s.ret.Config.AccessFlush, s.b)
	}
	return &Engine{shared: s, reach: reach{ns: ns}}, nil
}

// flushAccesses writes the pending access statistics now, for operations
// that read or carry them over (export, consolidation).
func (s *shared) flushAccesses() {
	if s.access != nil {
		s.access.flush()
	}
}

// checkModel records the embedding model in a new store b and refuses to
// mix models in an existing one.
func checkModel(ctx context.Context, b Backend, model ModelInfo, allowChange bool) error {
	var stored, dim string
	err := b.View(ctx, func(tx ReadTx) error {
		var err error
		if stored, err = tx.Meta(metaModel); err != nil {
			return err
		}
		dim, err = tx.Meta(metaDim)
		return err
	})
	switch {
	case errors.Is(err, ErrNotFound):
		return b.Update(ctx, func(tx Tx) error {
			if err := tx.SetMeta(metaModel, model.ID); err != nil {
				return err
			}
			return tx.SetMeta(metaDim, fmt.Sprint(model.Dim))
		})
	case err != nil:
		return err
	case stored != model.ID && !allowChange:
		return fmt.Errorf("%w: the store was embedded with model %s (%s dimensions) but the configured embedder is %s (%d dimensions); configure the original embedder, or run `memos reembed` to switch the store to the new one",
			ErrModelMismatch, stored, dim, model.ID, model.Dim)
	}
	return nil
}

// In returns a handle on the same store scoped to namespace ns: writes go to
// ns, reads see ns and the default namespace. A limited handle (see Limit)
// stays limited and may only move to one of its namespaces (ErrForbidden).
func (e *Engine) In(ns string) (*Engine, error) {
	if err := ValidateNamespace(ns); err != nil {
		return nil, &Error{Op: "namespace", Err: err}
	}
	if e.only != nil && !slices.Contains(e.only, ns) {
		return nil, &Error{Op: "namespace", Err: fmt.Errorf("%w: this caller may not use namespace %s (it may use %s)", ErrForbidden, ns, strings.Join(e.only, ", "))}
	}
	return &Engine{shared: e.shared, reach: reach{ns: ns, only: e.only}}, nil
}

// Limit returns a handle like e for a caller limited to namespaces nss,
// which must include e's namespace: it reads what e reads (its namespace
// and default) but changes only memories in nss. A change to a memory it
// can read but not change — one in default, unless nss holds default — is
// ErrForbidden and writes nothing; a memory it cannot read stays
// ErrNotFound. In particular: new memories (also those Supersede makes)
// go to its namespace; Update, SetValidity, Revert, Supersede, Release,
// Reject, LessonOutcome and Forget need the memory in nss; an edge belongs
// to the memory it starts at, so Link and Unlink need from in nss (and to
// readable); ForgetSource forgets only memories in nss; a trusted memory
// outside nss that a new one contradicts is not demoted: the newcomer waits
// for review instead. Stats leaves out the store-wide figures, and Import,
// Export, Reembed, Audit, VerifyAudit and ExportAudit, which reach the
// whole store, are ErrForbidden, as is every call to its Backend.
//
// Front-ends give a caller whose token is limited to namespaces such a
// handle.
func (e *Engine) Limit(nss ...string) (*Engine, error) {
	if len(nss) == 0 {
		return nil, &Error{Op: "limit", Err: invalidf("no namespaces given")}
	}
	for _, ns := range nss {
		if err := ValidateNamespace(ns); err != nil {
			return nil, &Error{Op: "limit", Err: err}
		}
		if !e.mayChange(ns) {
			return nil, &Error{Op: "limit", Err: fmt.Errorf("%w: this caller may not use namespace %s (it may use %s)", ErrForbidden, ns, strings.Join(e.only, ", "))}
		}
	}
	if !slices.Contains(nss, e.ns) {
		return nil, &Error{Op: "limit", Err: fmt.Errorf("%w: namespace %s is not among %s", ErrForbidden, e.ns, strings.Join(nss, ", "))}
	}
	return &Engine{shared: e.shared, reach: reach{ns: e.ns, only: slices.Clone(nss)}}, nil
}

// Namespace returns the namespace this handle writes to.
func (e *Engine) Namespace() string { return e.ns }

// Model returns the embedding model in use (zero without an embedder).
func (e *Engine) Model() ModelInfo { return e.model }

// Backend returns the engine's backend, for tools such as migration and
// benchmarks that work below the engine. Writes through it bypass validation.
// On a limited handle (Limit) it returns a backend that refuses every call,
// Close included, with ErrForbidden: the store below the engine reaches
// every namespace.
func (e *Engine) Backend() Backend {
	if e.only != nil {
		return refused{e.reach}
	}
	return e.b
}

// Close saves the vector snapshot (if Options.VectorSnapshot is set; a
// failure to save it is logged as a warning, since the next open rebuilds
// the index without it), then closes the backend and, if it is an
// io.Closer, the embedder. Every write has committed before Close, so an
// error from Close never means that a write was lost. Calls after the first
// return ErrClosed.
func (e *Engine) Close() error {
	if !e.closed.CompareAndSwap(false, true) {
		return &Error{Op: "close", Err: ErrClosed}
	}
	e.vec.Stop()
	if e.access != nil {
		e.access.close()
	}
	// The snapshot is a cache: without it the next open rebuilds the index
	// from the store. Failing to write it (on a full disk, say) loses
	// nothing, so it is a warning, not an error of Close.
	if err := e.vec.Save(); err != nil {
		slog.Warn("memos: the vector index snapshot was not saved; the next open rebuilds the index from the store", "err", err)
	}
	err := errors.Join(e.vec.Close(), e.b.Close())
	if c, ok := e.emb.(io.Closer); ok {
		err = errors.Join(err, c.Close())
	}
	for _, p := range []any{e.extractor, e.summarizer, e.ret.Reranker} {
		if c, ok := p.(io.Closer); ok {
			err = errors.Join(err, c.Close())
		}
	}
	return err
}

func (s *shared) checkOpen(op string) error {
	if s.closed.Load() {
		return &Error{Op: op, Err: ErrClosed}
	}
	return nil
}

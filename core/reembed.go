package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
)

// DefaultReembedBatch is the number of memories Reembed embeds and writes in
// one transaction when ReembedOptions.BatchSize is 0.
const DefaultReembedBatch = 128

// reembedPasses bounds the passes Reembed makes when other processes keep
// writing memories with another model while it runs.
const reembedPasses = 3

// ReembedOptions tune Reembed. The zero value is usable.
type ReembedOptions struct {
	// BatchSize is the number of memories read, embedded and written per
	// transaction; 0 means DefaultReembedBatch. Work committed in earlier
	// batches survives an interruption.
	BatchSize int
	// Progress, if not nil, is called from Reembed's goroutine at the start
	// and after every batch with the memories looked at so far (re-embedded
	// or already on the model) and the number in the store; done ≤ total.
	Progress func(done, total int)
}

// ReembedReport says what Reembed did. Counts cover this run only.
type ReembedReport struct {
	// Model and Dim are the engine's embedding model, which the store records
	// once Reembed succeeds.
	Model string `json:"model"`
	Dim   int    `json:"dim"`
	// Previous is the model the store recorded before this run ("" if none).
	Previous string `json:"previous_model,omitempty"`
	// Total counts the memories in the store (every namespace and status)
	// when the run started.
	Total int `json:"total"`
	// Reembedded counts the memories this run wrote a re-embedding version of.
	Reembedded int `json:"reembedded"`
	// Skipped counts the memories that were already embedded with Model,
	// for instance by an interrupted earlier run.
	Skipped int `json:"skipped"`
	// Batches counts the transactions that wrote versions.
	Batches int `json:"batches"`
	// Switched reports whether this run changed the store's recorded model;
	// false when it already was Model.
	Switched bool `json:"switched"`
}

// Reembed switches the store to the engine's embedding model: it embeds
// every memory whose current version was embedded with another model (or
// none) — in every namespace and with every status, whatever this handle's
// scope — and then records the engine's model as the store's.
//
// To move a store to a new model, open it with the new embedder and
// Options.AllowModelChange, then call Reembed. Memories are read in id order
// and handled in batches of BatchSize, each embedded and written in its own
// transaction, so an interruption (an error, a cancelled ctx, a crash) loses
// nothing: calling Reembed again skips what is already on the new model and
// carries on. Each re-embedded memory gets a new version equal to the
// previous one but for its embedding and updated_at, so History shows when
// and with which model it was re-embedded. (The backend interface has no
// way to replace a version's vector in place.)
//
// Once no memory is left on another model, one transaction records the new
// model and its dimension in the store and appends an "embedder.switch"
// entry to the audit log: that is the atomic switch; the vector snapshot
// (Options.VectorSnapshot) is saved right after it. Until then the store
// still opens with the old embedder, whose vector index simply leaves out
// the memories already converted (keyword search still finds them); after
// it, opening with the old embedder fails with ErrModelMismatch and
// opening with the new one needs no AllowModelChange. Other processes should
// not write to the store while it runs: vectors they write with the old
// model would make Reembed convert them too, and it gives up with
// ErrConflict after a few passes if they keep coming.
//
// On error the report, if not nil, counts the work committed before it.
func (e *Engine) Reembed(ctx context.Context, opts ReembedOptions) (*ReembedReport, error) {
	const op = "reembed"
	if err := e.checkOpen(op); err != nil {
		return nil, err
	}
	if err := e.whole(op); err != nil {
		return nil, err
	}
	if e.emb == nil {
		return nil, &Error{Op: op, Err: invalidf("re-embedding needs an embedder; configure the new one and run again")}
	}
	size := opts.BatchSize
	switch {
	case size == 0:
		size = DefaultReembedBatch
	case size < 0:
		return nil, &Error{Op: op, Err: invalidf("batch size %d must be positive (0 means %d)", size, DefaultReembedBatch)}
	}
	rep := &ReembedReport{Model: e.model.ID, Dim: e.model.Dim}
	err := e.b.View(ctx, func(tx ReadTx) error {
		prev, err := tx.Meta(metaModel)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return err
		}
		rep.Previous = prev
		return tx.Scan(ScanOptions{}, func(*Memory) error {
			rep.Total++
			return nil
		})
	})
	if err != nil {
		return nil, &Error{Op: op, Err: err}
	}
	r := &reembedRun{e: e, size: size, rep: rep, progress: opts.Progress}
	r.report(0)
	for pass := 0; ; pass++ {
		if err := r.pass(ctx, pass == 0); err != nil {
			return rep, &Error{Op: op, Err: err}
		}
		left, err := r.switchModel(ctx)
		if err != nil {
			return rep, &Error{Op: op, Err: err}
		}
		if left == 0 {
			// The snapshot on disk is of the old model, which the next open
			// would ignore with a warning and rebuild from the store; save
			// the new model's index now rather than only on Close (a process
			// that dies before Close would leave the old one). Like Close, a
			// snapshot that cannot be written costs a rebuild, not the run.
			if err := e.vec.Save(); err != nil {
				slog.Warn("memos: the vector index snapshot was not saved after re-embedding; the next open rebuilds the index from the store", "err", err)
			}
			return rep, nil
		}
		if pass+1 == reembedPasses {
			return rep, &Error{Op: op, Err: fmt.Errorf("%w: %d memories were written with another embedding model while re-embedding, %d times in a row; stop the other memos processes that use this store and run it again",
				ErrConflict, left, reembedPasses)}
		}
	}
}

// reembedRun is the state of one Reembed call.
type reembedRun struct {
	e        *Engine
	size     int
	rep      *ReembedReport
	progress func(done, total int)
}

func (r *reembedRun) report(done int) {
	if r.progress != nil {
		r.progress(min(done, r.rep.Total), r.rep.Total)
	}
}

// current reports whether m's current version is embedded with the engine's model.
func (r *reembedRun) current(m *Memory) bool {
	return m.Embedding.Model == r.e.model.ID && m.Embedding.Dim() == r.e.model.Dim
}

// pass walks every memory in id order and re-embeds those not on the
// engine's model, one batch per transaction. Only the first pass counts the
// memories it skips.
func (r *reembedRun) pass(ctx context.Context, first bool) error {
	var after int64
	done := 0
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		var page, todo []*Memory
		err := r.e.b.View(ctx, func(tx ReadTx) error {
			page, todo = page[:0], todo[:0]
			return tx.Scan(ScanOptions{AfterID: after, Limit: r.size}, func(m *Memory) error {
				page = append(page, m)
				if !r.current(m) {
					todo = append(todo, m)
				}
				return nil
			})
		})
		if err != nil {
			return err
		}
		if len(page) == 0 {
			return nil
		}
		after = page[len(page)-1].ID
		done += len(page)
		if first {
			r.rep.Skipped += len(page) - len(todo)
		}
		if len(todo) > 0 {
			if err := r.batch(ctx, todo); err != nil {
				return err
			}
		}
		r.report(done)
	}
}

// batch embeds the memories in todo and writes a re-embedding version of
// each in one transaction. A memory changed or forgotten since it was read
// is left alone: a later pass picks it up if it still needs it.
func (r *reembedRun) batch(ctx context.Context, todo []*Memory) error {
	texts := make([]string, len(todo))
	for i, m := range todo {
		texts[i] = m.Content
	}
	vecs, err := r.e.embed(ctx, texts)
	if err != nil {
		return err
	}
	var n int
	err = r.e.b.Update(ctx, func(tx Tx) error {
		n = 0
		au := r.e.auditor(tx)
		for i, m := range todo {
			cur, err := tx.Get(m.ID, 0)
			if errors.Is(err, ErrNotFound) {
				continue // forgotten meanwhile
			}
			if err != nil {
				return fmt.Errorf("memory %d: %w", m.ID, err)
			}
			if r.current(cur) || cur.Content != m.Content {
				continue // re-embedded or rewritten meanwhile
			}
			next := cur.Clone()
			next.Embedding = Embedding{Model: r.e.model.ID, Vector: vecs[i]}
			if err := r.e.putVersion(tx, au, "reembed", cur, next, nil); err != nil {
				return fmt.Errorf("memory %d: %w", m.ID, err)
			}
			n++
		}
		return au.Close()
	})
	if err != nil {
		return err
	}
	if n > 0 {
		r.rep.Reembedded += n
		r.rep.Batches++
	}
	return r.e.vec.Sync(ctx)
}

// switchModel records the engine's model as the store's, in one transaction
// that first checks that no memory is left on another model. It returns the
// number left (and records nothing) otherwise.
func (r *reembedRun) switchModel(ctx context.Context) (left int, err error) {
	model, dim := r.e.model.ID, strconv.Itoa(r.e.model.Dim)
	switched := false
	err = r.e.b.Update(ctx, func(tx Tx) error {
		left, switched = 0, false
		err := tx.Scan(ScanOptions{}, func(m *Memory) error {
			if !r.current(m) {
				left++
			}
			return nil
		})
		if err != nil || left > 0 {
			return err
		}
		prev, err := tx.Meta(metaModel)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return err
		}
		prevDim, err := tx.Meta(metaDim)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return err
		}
		if prev == model && prevDim == dim {
			return nil
		}
		if err := tx.SetMeta(metaModel, model); err != nil {
			return err
		}
		if err := tx.SetMeta(metaDim, dim); err != nil {
			return err
		}
		detail, err := json.Marshal(map[string]any{
			"from": prev, "from_dim": prevDim, "to": model, "to_dim": r.e.model.Dim,
			"reembedded": r.rep.Reembedded,
		})
		if err != nil {
			return err
		}
		if _, err := r.e.appendAudit(tx, "embedder.switch", 0, string(detail)); err != nil {
			return err
		}
		switched = true
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("switch the store to %s: %w", model, err)
	}
	r.rep.Switched = r.rep.Switched || switched
	return left, nil
}

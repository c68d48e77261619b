package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
)

// MigrateReport says what Migrate copied and checked.
type MigrateReport struct {
	Memories     int   `json:"memories"`
	Versions     int   `json:"versions"`
	Edges        int   `json:"edges"`
	AuditEntries int   `json:"audit_entries"`
	MaxID        int64 `json:"max_id"` // highest id the source ever assigned
	Verified     bool  `json:"verified"`
}

// migrateBatch is how many memories one transaction of the copy writes.
const migrateBatch = 256

// engineMeta lists the store settings the engine keeps, which a copy needs.
var engineMeta = []string{metaModel, metaDim, metaAuditHead}

// Migrate copies a store from src to dst, which must be empty and whose
// transactions must implement Importer: every memory with its id and all its
// versions (every namespace and status), every edge, the audit log and the
// engine's settings (embedding model, audit head). Ids forgotten in src stay
// unused in dst. Access statistics are copied as of the current version.
// Afterwards it reads both stores back and compares them; any difference is
// an error. progress, if not nil, is called after each batch.
//
// Nothing may write to src meanwhile (the CLI holds it open for the copy).
func Migrate(ctx context.Context, src, dst Backend, progress func(done, total int)) (*MigrateReport, error) {
	const op = "migrate"
	rep := &MigrateReport{}
	var ids []int64
	err := src.View(ctx, func(tx ReadTx) error {
		return tx.Changes(0, func(c Change) error {
			rep.MaxID = max(rep.MaxID, c.ID)
			if !c.Deleted {
				ids = append(ids, c.ID)
			}
			return nil
		})
	})
	if err != nil {
		return nil, &Error{Op: op, Err: fmt.Errorf("read source: %w", err)}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	var dstSeq uint64
	if err := dst.View(ctx, func(tx ReadTx) error {
		var err error
		dstSeq, err = tx.Seq()
		return err
	}); err != nil {
		return nil, &Error{Op: op, Err: fmt.Errorf("read target: %w", err)}
	}
	if dstSeq != 0 {
		return nil, &Error{Op: op, Err: invalidf("the target store is not empty; migrate into a new store")}
	}

	var edges []Edge
	for start := 0; start < len(ids); start += migrateBatch {
		batch := ids[start:min(start+migrateBatch, len(ids))]
		hists := make([][]*Memory, 0, len(batch))
		err := src.View(ctx, func(tx ReadTx) error {
			for _, id := range batch {
				h, err := tx.History(id)
				if err != nil {
					return err
				}
				hists = append(hists, h)
				es, err := tx.Edges(id)
				if err != nil {
					return err
				}
				for _, e := range es {
					if e.From == id { // each edge once, from its start
						edges = append(edges, e)
					}
				}
			}
			return nil
		})
		if err != nil {
			return rep, &Error{Op: op, Err: fmt.Errorf("read source: %w", err)}
		}
		err = dst.Update(ctx, func(tx Tx) error {
			imp, ok := tx.(Importer)
			if !ok {
				return invalidf("the target backend cannot import memories with their ids (no core.Importer)")
			}
			for _, h := range hists {
				for i, v := range h {
					if i == 0 {
						err = imp.InsertAt(v.Clone())
					} else {
						err = tx.Put(v.Clone())
					}
					if err != nil {
						return fmt.Errorf("memory %d version %d: %w", v.ID, v.Version, err)
					}
				}
			}
			return nil
		})
		if err != nil {
			return rep, &Error{Op: op, Err: fmt.Errorf("write target: %w", err)}
		}
		for _, h := range hists {
			rep.Memories++
			rep.Versions += len(h)
		}
		if progress != nil {
			progress(rep.Memories, len(ids))
		}
	}

	var audit []AuditEntry
	meta := map[string]string{}
	err = src.View(ctx, func(tx ReadTx) error {
		for _, k := range engineMeta {
			v, err := tx.Meta(k)
			if errors.Is(err, ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			meta[k] = v
		}
		if ar, ok := tx.(AuditReader); ok {
			return ar.Audit(func(a AuditEntry) error {
				audit = append(audit, a)
				return nil
			})
		}
		return nil
	})
	if err != nil {
		return rep, &Error{Op: op, Err: fmt.Errorf("read source: %w", err)}
	}
	err = dst.Update(ctx, func(tx Tx) error {
		for _, e := range edges {
			if err := tx.Link(e); err != nil {
				return fmt.Errorf("edge %d→%d: %w", e.From, e.To, err)
			}
		}
		for _, a := range audit {
			a.Seq = 0
			if err := tx.AppendAudit(&a); err != nil {
				return fmt.Errorf("audit entry: %w", err)
			}
		}
		for k, v := range meta {
			if err := tx.SetMeta(k, v); err != nil {
				return err
			}
		}
		return tx.(Importer).ReserveIDs(rep.MaxID)
	})
	if err != nil {
		return rep, &Error{Op: op, Err: fmt.Errorf("write target: %w", err)}
	}
	rep.Edges, rep.AuditEntries = len(edges), len(audit)
	if err := verifyCopy(ctx, src, dst, ids, rep); err != nil {
		return rep, &Error{Op: op, Err: err}
	}
	rep.Verified = true
	return rep, nil
}

// verifyCopy reads every memory's history and edges from both stores and
// compares them field by field, vectors bit for bit.
func verifyCopy(ctx context.Context, src, dst Backend, ids []int64, rep *MigrateReport) error {
	read := func(b Backend, batch []int64) (map[int64]string, error) {
		out := map[int64]string{}
		err := b.View(ctx, func(tx ReadTx) error {
			for _, id := range batch {
				h, err := tx.History(id)
				if err != nil {
					return err
				}
				es, err := tx.Edges(id)
				if err != nil {
					return err
				}
				var vecs [][]float32
				for _, v := range h {
					vecs = append(vecs, v.Embedding.Vector)
				}
				for i := range es {
					es[i].CreatedAt = es[i].CreatedAt.UTC()
				}
				b, err := json.Marshal(struct {
					H []*Memory
					V [][]float32
					E []Edge
				}{h, vecs, es})
				if err != nil {
					return err
				}
				out[id] = string(b)
			}
			return nil
		})
		return out, err
	}
	for start := 0; start < len(ids); start += migrateBatch {
		batch := ids[start:min(start+migrateBatch, len(ids))]
		a, err := read(src, batch)
		if err != nil {
			return fmt.Errorf("verify: read source: %w", err)
		}
		b, err := read(dst, batch)
		if err != nil {
			return fmt.Errorf("verify: read target: %w", err)
		}
		for _, id := range batch {
			if a[id] != b[id] {
				return fmt.Errorf("verify: memory %d differs between the stores", id)
			}
		}
	}
	var n int
	err := dst.View(ctx, func(tx ReadTx) error {
		return tx.Changes(0, func(c Change) error {
			if !c.Deleted {
				n++
			}
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("verify: read target: %w", err)
	}
	if n != rep.Memories {
		return fmt.Errorf("verify: the target holds %d memories, the source %d", n, rep.Memories)
	}
	return nil
}

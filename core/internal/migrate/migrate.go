// Package migrate copies a store from one backend to another (memos
// migrate): every memory with its id and versions, the edges, the audit log
// and the engine's settings, then reads both back and compares them. A copy
// marks its target first and unmarks it once verified, so that an
// interrupted copy is refused by Open and resumed by the next run.
//
// It is written over core/driver and never imports the engine; core's
// Migrate and UnfinishedMigration call it.
package migrate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/memos-go/memos/core/driver"
)

// Report says what Copy copied and checked.
type Report struct {
	Memories int `json:"memories"`
	Versions int `json:"versions"` // versions this run copied

	Edges        int   `json:"edges"`
	AuditEntries int   `json:"audit_entries"`
	MaxID        int64 `json:"max_id"` // highest id the source ever assigned
	// Resumed counts the memories an earlier, interrupted run had already
	// copied (included in Memories).
	Resumed  int  `json:"resumed,omitempty"`
	Verified bool `json:"verified"`
}

// metaMigrate marks a store that Copy is copying into: it is its first
// write to the store, and it is cleared ("") once the copy is verified.
// Open refuses a store that carries it (Check), and Copy resumes into it.
const metaMigrate = "migrate.incomplete"

// migrateMark is the value of metaMigrate.
type migrateMark struct {
	SourceSeq uint64    `json:"source_seq"` // the source's change seq when the copy began
	Phase     string    `json:"phase"`      // "copy", then "verify" once everything is written
	Started   time.Time `json:"started"`
}

// readMark returns the unfinished-copy mark of b, or nil.
func readMark(ctx context.Context, b driver.Backend) (*migrateMark, error) {
	var v string
	err := b.View(ctx, func(tx driver.ReadTx) error {
		var err error
		v, err = tx.Meta(metaMigrate)
		return err
	})
	if errors.Is(err, driver.ErrNotFound) || (err == nil && v == "") {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var m migrateMark
	if err := json.Unmarshal([]byte(v), &m); err != nil {
		return nil, fmt.Errorf("malformed %s mark %q: %w", metaMigrate, v, err)
	}
	return &m, nil
}

// Unfinished reports whether b is a target that Copy began to
// copy into and did not finish verifying (the copy was interrupted).
func Unfinished(ctx context.Context, b driver.Backend) (bool, error) {
	m, err := readMark(ctx, b)
	return m != nil, err
}

// Check refuses to open a store that is an unfinished copy.
func Check(ctx context.Context, b driver.Backend) error {
	m, err := readMark(ctx, b)
	if err != nil || m == nil {
		return err
	}
	return driver.Invalidf("the store is an unfinished copy left by an interrupted `memos migrate` (started %s): run the same `memos migrate --to <backend>` again to finish it, or add --force to start it over; until then keep using the source store",
		m.Started.UTC().Format(time.RFC3339))
}

func setMark(ctx context.Context, b driver.Backend, m *migrateMark) error {
	v := ""
	if m != nil {
		j, err := json.Marshal(m)
		if err != nil {
			return err
		}
		v = string(j)
	}
	return b.Update(ctx, func(tx driver.Tx) error { return tx.SetMeta(metaMigrate, v) })
}

// errStop ends a walk early.
var errStop = errors.New("stop")

// unwritten reports whether b holds no memory, live or forgotten, and no
// audit entry: a new store, perhaps opened by the engine already, which
// records only its settings (embedding model, store id), which a copy
// replaces.
func unwritten(ctx context.Context, b driver.Backend) (bool, error) {
	empty := true
	err := b.View(ctx, func(tx driver.ReadTx) error {
		err := tx.Changes(0, func(driver.Change) error { empty = false; return errStop })
		if err != nil || !empty {
			return err
		}
		if ar, ok := tx.(driver.AuditReader); ok {
			return ar.Audit(func(driver.AuditEntry) error { empty = false; return errStop })
		}
		return nil
	})
	if errors.Is(err, errStop) {
		err = nil
	}
	return empty, err
}

// migrateBatch is how many memories one transaction of the copy writes.
const migrateBatch = 256

// Copy copies src into dst and verifies the copy, as core.Migrate
// documents; keys names the meta settings of the engine it copies with the
// rest (embedding model, audit head).
func Copy(ctx context.Context, src, dst driver.Backend, keys []string, progress func(done, total int)) (*Report, error) {
	const op = "migrate"
	rep := &Report{}
	mark, resume, err := startMigration(ctx, src, dst)
	if err != nil {
		return nil, &driver.Error{Op: op, Err: err}
	}
	ids, err := sourceIDs(ctx, src, rep)
	if err != nil {
		return nil, &driver.Error{Op: op, Err: err}
	}
	done := map[int64]bool{} // ids an interrupted run already copied
	if resume {
		if done, err = copiedIDs(ctx, dst); err != nil {
			return nil, &driver.Error{Op: op, Err: err}
		}
		rep.Resumed = len(done)
	}
	if mark.Phase == "verify" {
		// Everything was written; only the comparison did not finish.
		if rep.Edges, rep.AuditEntries, err = countSource(ctx, src, ids); err != nil {
			return rep, &driver.Error{Op: op, Err: err}
		}
		rep.Memories = len(ids)
		return rep, finishCopy(ctx, src, dst, ids, rep)
	}
	edges, err := copyMemories(ctx, src, dst, ids, done, rep, progress)
	if err != nil {
		return rep, &driver.Error{Op: op, Err: err}
	}
	audit, meta, err := readSourceRest(ctx, src, keys)
	if err != nil {
		return rep, &driver.Error{Op: op, Err: err}
	}
	if err := writeRest(ctx, dst, edges, audit, meta, mark, rep.MaxID); err != nil {
		return rep, &driver.Error{Op: op, Err: err}
	}
	rep.Edges, rep.AuditEntries = len(edges), len(audit)
	return rep, finishCopy(ctx, src, dst, ids, rep)
}

// startMigration marks the target as a copy of the source before anything
// else is written to it, and before the source is listed (which takes a
// while): a copy killed at any point after this leaves a target that Open
// refuses. A target marked already resumes (resume), if the source has not
// changed since.
func startMigration(ctx context.Context, src, dst driver.Backend) (mark *migrateMark, resume bool, err error) {
	mark, err = readMark(ctx, dst)
	if err != nil {
		return nil, false, fmt.Errorf("read target: %w", err)
	}
	var srcSeq uint64
	if err := src.View(ctx, func(tx driver.ReadTx) error {
		var err error
		srcSeq, err = tx.Seq()
		return err
	}); err != nil {
		return nil, false, fmt.Errorf("read source: %w", err)
	}
	if mark != nil {
		if mark.SourceSeq != srcSeq {
			return nil, false, driver.Invalidf("the target is an unfinished copy of the source as it was at change %d, and the source has changed since (now %d); start the copy over (memos migrate --force)", mark.SourceSeq, srcSeq)
		}
		return mark, true, nil
	}
	empty, err := unwritten(ctx, dst)
	if err != nil {
		return nil, false, fmt.Errorf("read target: %w", err)
	}
	if !empty {
		return nil, false, driver.Invalidf("the target store is not empty (it holds memories or an audit log); migrate into a new store")
	}
	mark = &migrateMark{SourceSeq: srcSeq, Phase: "copy", Started: time.Now().UTC()}
	if err := setMark(ctx, dst, mark); err != nil {
		return nil, false, fmt.Errorf("write target: %w", err)
	}
	return mark, false, nil
}

// sourceIDs returns the ids of the source's memories in ascending order and
// sets rep.MaxID to the largest id the source used, forgotten ones too.
func sourceIDs(ctx context.Context, src driver.Backend, rep *Report) ([]int64, error) {
	var ids []int64
	err := src.View(ctx, func(tx driver.ReadTx) error {
		return tx.Changes(0, func(c driver.Change) error {
			rep.MaxID = max(rep.MaxID, c.ID)
			if !c.Deleted {
				ids = append(ids, c.ID)
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("read source: %w", err)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids, nil
}

// copiedIDs returns the ids of the memories in the target: those an
// interrupted run copied already.
func copiedIDs(ctx context.Context, dst driver.Backend) (map[int64]bool, error) {
	done := map[int64]bool{}
	err := dst.View(ctx, func(tx driver.ReadTx) error {
		return tx.Changes(0, func(c driver.Change) error {
			if !c.Deleted {
				done[c.ID] = true
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("read target: %w", err)
	}
	return done, nil
}

// countSource counts the source's edges (of the memories ids) and audit
// entries, for the report of a run that only verifies.
func countSource(ctx context.Context, src driver.Backend, ids []int64) (nEdges, nAudit int, err error) {
	err = src.View(ctx, func(tx driver.ReadTx) error {
		for _, id := range ids {
			es, err := tx.Edges(id)
			if err != nil {
				return err
			}
			for _, e := range es {
				if e.From == id {
					nEdges++
				}
			}
		}
		if ar, ok := tx.(driver.AuditReader); ok {
			return ar.Audit(func(driver.AuditEntry) error { nAudit++; return nil })
		}
		return nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("read source: %w", err)
	}
	return nEdges, nAudit, nil
}

// copyMemories copies every version of the memories ids that are not done
// into the target, migrateBatch memories a transaction, and returns the
// edges of all of ids (each once, from its start), to be linked once every
// memory is there.
func copyMemories(ctx context.Context, src, dst driver.Backend, ids []int64, done map[int64]bool, rep *Report, progress func(done, total int)) ([]driver.Edge, error) {
	var edges []driver.Edge
	for start := 0; start < len(ids); start += migrateBatch {
		batch := ids[start:min(start+migrateBatch, len(ids))]
		hists := make([][]*driver.Memory, 0, len(batch))
		err := src.View(ctx, func(tx driver.ReadTx) error {
			for _, id := range batch {
				if !done[id] {
					h, err := tx.History(id)
					if err != nil {
						return err
					}
					hists = append(hists, h)
				}
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
			return nil, fmt.Errorf("read source: %w", err)
		}
		if err := dst.Update(ctx, func(tx driver.Tx) error { return writeHistories(tx, hists) }); err != nil {
			return nil, fmt.Errorf("write target: %w", err)
		}
		rep.Memories += len(batch)
		for _, h := range hists {
			rep.Versions += len(h)
		}
		if progress != nil {
			progress(rep.Memories, len(ids))
		}
	}
	return edges, nil
}

// writeHistories writes each history's versions under their ids: the first
// with InsertAt, the others with Put.
func writeHistories(tx driver.Tx, hists [][]*driver.Memory) error {
	imp, ok := tx.(driver.Importer)
	if !ok {
		return driver.Invalidf("the target backend cannot import memories with their ids (no core.Importer)")
	}
	for _, h := range hists {
		for i, v := range h {
			var err error
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
}

// readSourceRest reads the source's audit log and the engine's settings
// (the meta keys named by keys).
func readSourceRest(ctx context.Context, src driver.Backend, keys []string) ([]driver.AuditEntry, map[string]string, error) {
	var audit []driver.AuditEntry
	meta := map[string]string{}
	err := src.View(ctx, func(tx driver.ReadTx) error {
		for _, k := range keys {
			v, err := tx.Meta(k)
			if errors.Is(err, driver.ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			meta[k] = v
		}
		if ar, ok := tx.(driver.AuditReader); ok {
			return ar.Audit(func(a driver.AuditEntry) error {
				audit = append(audit, a)
				return nil
			})
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("read source: %w", err)
	}
	return audit, meta, nil
}

// writeRest writes the edges, the audit log and the settings to the target
// in one transaction, which also moves the mark to the verify phase and
// reserves the ids up to maxID.
func writeRest(ctx context.Context, dst driver.Backend, edges []driver.Edge, audit []driver.AuditEntry, meta map[string]string, mark *migrateMark, maxID int64) error {
	err := dst.Update(ctx, func(tx driver.Tx) error {
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
		// A run interrupted from here on only needs to verify: the edges
		// and the audit log must not be written twice.
		b, err := json.Marshal(migrateMark{SourceSeq: mark.SourceSeq, Phase: "verify", Started: mark.Started})
		if err != nil {
			return err
		}
		if err := tx.SetMeta(metaMigrate, string(b)); err != nil {
			return err
		}
		return tx.(driver.Importer).ReserveIDs(maxID)
	})
	if err != nil {
		return fmt.Errorf("write target: %w", err)
	}
	return nil
}

// finishCopy verifies the copy and, when it matches, unmarks the target.
func finishCopy(ctx context.Context, src, dst driver.Backend, ids []int64, rep *Report) error {
	if err := verifyCopy(ctx, src, dst, ids, rep); err != nil {
		return &driver.Error{Op: "migrate", Err: err}
	}
	if err := setMark(ctx, dst, nil); err != nil {
		return &driver.Error{Op: "migrate", Err: fmt.Errorf("verified, but could not mark the target finished: %w", err)}
	}
	rep.Verified = true
	return nil
}

// verifyCopy reads every memory's history and edges from both stores and
// compares them field by field, vectors bit for bit.
func verifyCopy(ctx context.Context, src, dst driver.Backend, ids []int64, rep *Report) error {
	read := func(b driver.Backend, batch []int64) (map[int64]string, error) {
		out := map[int64]string{}
		err := b.View(ctx, func(tx driver.ReadTx) error {
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
					H []*driver.Memory
					V [][]float32
					E []driver.Edge
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
	err := dst.View(ctx, func(tx driver.ReadTx) error {
		return tx.Changes(0, func(c driver.Change) error {
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

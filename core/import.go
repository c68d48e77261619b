package core

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/memos-go/memos/core/internal/check"
	"github.com/memos-go/memos/core/internal/govern"
)

// ImportedMemory is one memory with its whole history, as an export or
// another memory system holds it: Versions oldest first. Import gives it a
// new id and numbers its versions 1..n; every other field is kept as given
// (content, times, trust, status, validity, access statistics, metadata).
type ImportedMemory struct {
	Versions []*Memory
	// Name is how errors name it, e.g. "line 3 (memory 7)" ("": "memory N
	// of the import", counting from 1).
	Name string
}

// ImportedEdge is an edge between two memories of the same import, named by
// their index in ImportRequest.Memories. Its Type, Weight, CreatedAt and
// Source are kept; Edge.From and Edge.To are ignored.
type ImportedEdge struct {
	From, To int
	Edge     Edge
	// Name is how errors name it ("": "edge N of the import").
	Name string
}

// ImportRequest is what Import stores.
type ImportRequest struct {
	Memories []ImportedMemory
	Edges    []ImportedEdge
	// KeepEmbeddings keeps a version's embedding when it was made by the
	// store's model (same model id and dimension); every other version is
	// embedded with the engine's embedder.
	KeepEmbeddings bool
	// Origin names the import in its audit entry, e.g. "jsonl:backup.jsonl".
	Origin string
	// DryRun validates and reports what would be stored, and stores nothing.
	DryRun bool
	// Progress, if not nil, is called after each batch.
	Progress func(done, total int)
}

// ImportReport says what Import stored.
type ImportReport struct {
	Imported int `json:"imported"`
	// Skipped memories were already in the store (see Import).
	Skipped  int `json:"skipped"`
	Versions int `json:"versions"`
	// Edges counts the edges stored (new, or changed in weight or source);
	// SkippedEdges those the store already held as they are.
	Edges          int  `json:"edges"`
	SkippedEdges   int  `json:"skipped_edges"`
	Embedded       int  `json:"embedded"`        // versions embedded with the store's embedder
	KeptEmbeddings int  `json:"kept_embeddings"` // versions whose given embedding was kept
	DryRun         bool `json:"dry_run,omitempty"`
	// IDs holds, for each input memory, its id in the store: the new one, or
	// the existing memory's for a skipped one (0 in a dry run for new ones).
	IDs []int64 `json:"ids"`
}

// importBatch is how many memories one transaction of an import writes.
const importBatch = 256

// Import stores memories with their history and the edges between them. It
// validates everything before it writes anything: an invalid version or edge
// is an ErrInvalid naming it (ImportedMemory.Name), and nothing is stored. It
// then writes in transactions of 256 memories; the edges follow in one more.
//
// Import is idempotent: a memory is skipped when the store already holds one
// in the same namespace with the same creation time and the same first
// version's content, so that running an import again (also after an
// interruption) adds only what is missing. An edge the store already holds
// with the same weight and source is skipped too; others are added or
// replace the edge of the same ends and type.
func (e *Engine) Import(ctx context.Context, req ImportRequest) (*ImportReport, error) {
	const op = "import"
	if err := e.checkOpen(op); err != nil {
		return nil, err
	}
	if err := e.whole(op); err != nil {
		return nil, err
	}
	items, names, err := e.importItems(req)
	if err != nil {
		return nil, &Error{Op: op, Err: err}
	}
	rep := &ImportReport{DryRun: req.DryRun, IDs: make([]int64, len(items))}
	existing, err := e.importKeys(ctx)
	if err != nil {
		return nil, &Error{Op: op, Err: err}
	}
	var todo []int
	for i, hist := range items {
		id, ok, err := existing.find(ctx, e, hist[0])
		if err != nil {
			return nil, &Error{Op: op, Err: err}
		}
		if ok {
			rep.IDs[i] = id
			rep.Skipped++
			continue
		}
		todo = append(todo, i)
	}
	if req.DryRun {
		rep.Imported = len(todo)
		for _, i := range todo {
			rep.Versions += len(items[i])
		}
		err := e.b.View(ctx, func(tx ReadTx) error {
			for _, ie := range req.Edges {
				edge := ie.Edge
				edge.From, edge.To = rep.IDs[ie.From], rep.IDs[ie.To] // 0: a memory not yet stored
				held := false
				if edge.From != 0 && edge.To != 0 {
					var err error
					if held, err = edgeHeld(tx, edge); err != nil {
						return err
					}
				}
				if held {
					rep.SkippedEdges++
				} else {
					rep.Edges++
				}
			}
			return nil
		})
		if err != nil {
			return nil, &Error{Op: op, Err: err}
		}
		return rep, nil
	}
	for start := 0; start < len(todo); start += importBatch {
		batch := todo[start:min(start+importBatch, len(todo))]
		if err := e.importBatch(ctx, req.KeepEmbeddings, items, names, batch, rep); err != nil {
			return rep, &Error{Op: op, Err: fmt.Errorf("after %d of %d memories: %w", rep.Imported, len(todo), err)}
		}
		if req.Progress != nil {
			req.Progress(start+len(batch), len(todo))
		}
	}
	err = e.b.Update(ctx, func(tx Tx) error {
		added, skipped := 0, 0
		for _, ie := range req.Edges {
			edge := ie.Edge
			edge.From, edge.To = rep.IDs[ie.From], rep.IDs[ie.To]
			held, err := edgeHeld(tx, edge)
			if err != nil {
				return err
			}
			if held {
				skipped++
				continue
			}
			if err := tx.Link(edge); err != nil {
				return err
			}
			added++
		}
		detail, _ := json.Marshal(map[string]any{"origin": req.Origin, "imported": rep.Imported,
			"skipped": rep.Skipped, "edges": added})
		if _, err := e.appendAudit(tx, "import", 0, string(detail)); err != nil {
			return err
		}
		rep.Edges, rep.SkippedEdges = added, skipped
		return nil
	})
	if err != nil {
		return rep, &Error{Op: op, Err: fmt.Errorf("edges: %w", err)}
	}
	if err := e.vec.Sync(ctx); err != nil {
		return rep, &Error{Op: op, Err: err}
	}
	return rep, nil
}

// edgeHeld reports whether the store holds edge as it is: same ends, type,
// weight and source.
func edgeHeld(tx ReadTx, edge Edge) (bool, error) {
	es, err := tx.Edges(edge.From)
	if err != nil {
		return false, err
	}
	for _, x := range es {
		if x.From == edge.From && x.To == edge.To && x.Type == edge.Type && x.Weight == edge.Weight && x.Source == edge.Source {
			return true, nil
		}
	}
	return false, nil
}

// importItems validates the request and returns each memory's versions,
// normalised (namespace default, version numbers, UTC times) and copied,
// and the names errors give each.
func (e *Engine) importItems(req ImportRequest) ([][]*Memory, []string, error) {
	items := make([][]*Memory, len(req.Memories))
	names := make([]string, len(req.Memories))
	for i, im := range req.Memories {
		name := im.Name
		if name == "" {
			name = fmt.Sprintf("memory %d of the import", i+1)
		}
		names[i] = name
		if len(im.Versions) == 0 {
			return nil, nil, invalidf("%s has no versions", name)
		}
		hist := make([]*Memory, len(im.Versions))
		for j, v := range im.Versions {
			if v == nil {
				return nil, nil, invalidf("%s: version %d is missing", name, j+1)
			}
			m := v.Clone()
			m.ID, m.Version = 0, j+1
			if m.Namespace == "" {
				m.Namespace = e.ns
			}
			if m.Status == "" {
				m.Status = StatusActive
			}
			m.Trust.Score = govern.CanonicalFloat(m.Trust.Score)
			m.CreatedAt, m.UpdatedAt = utc(m.CreatedAt), utc(m.UpdatedAt)
			m.ValidFrom, m.ValidTo, m.LastAccessedAt = utc(m.ValidFrom), utc(m.ValidTo), utc(m.LastAccessedAt)
			if m.CreatedAt.IsZero() {
				return nil, nil, invalidf("%s version %d has no creation time", name, j+1)
			}
			if m.UpdatedAt.IsZero() {
				m.UpdatedAt = m.CreatedAt
			}
			if err := m.Validate(); err != nil {
				return nil, nil, fmt.Errorf("%s version %d: %w", name, j+1, err)
			}
			if err := check.Metadata(m.Metadata); err != nil {
				return nil, nil, fmt.Errorf("%s version %d: %w", name, j+1, err)
			}
			if j > 0 && (m.Namespace != hist[0].Namespace || !m.CreatedAt.Equal(hist[0].CreatedAt)) {
				return nil, nil, invalidf("%s version %d: every version must keep the first one's namespace and creation time", name, j+1)
			}
			hist[j] = m
		}
		items[i] = hist
	}
	for k := range req.Edges {
		ie := &req.Edges[k]
		name := ie.Name
		if name == "" {
			name = fmt.Sprintf("edge %d of the import", k+1)
		}
		if ie.From < 0 || ie.From >= len(items) || ie.To < 0 || ie.To >= len(items) {
			return nil, nil, invalidf("%s joins memories %d and %d of the import, which has %d", name, ie.From+1, ie.To+1, len(items))
		}
		ie.Edge.From, ie.Edge.To = int64(ie.From)+1, int64(ie.To)+1 // for the self-link check
		if err := check.Edge(&ie.Edge); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		ie.Edge.CreatedAt = utc(ie.Edge.CreatedAt)
		if ie.Edge.CreatedAt.IsZero() {
			ie.Edge.CreatedAt = e.clock()
		}
	}
	return items, names, nil
}

// importBatch embeds and writes the memories items[i] for i in batch in one
// transaction, and records their new ids in rep.
func (e *Engine) importBatch(ctx context.Context, keep bool, items [][]*Memory, names []string, batch []int, rep *ImportReport) error {
	var texts []string
	var targets []*Memory
	kept := 0
	for _, i := range batch {
		for _, m := range items[i] {
			if keep && m.Embedding.Model == e.model.ID && m.Embedding.Dim() == e.model.Dim {
				if err := check.Vectors(e.model, [][]float32{m.Embedding.Vector}, 1); err != nil {
					return fmt.Errorf("%s version %d: %w", names[i], m.Version, err)
				}
				kept++
				continue
			}
			texts, targets = append(texts, m.Content), append(targets, m)
		}
	}
	vecs, err := e.embed(ctx, texts)
	if err != nil {
		return err
	}
	for k, m := range targets {
		m.Embedding = Embedding{}
		if vecs != nil {
			m.Embedding = Embedding{Model: e.model.ID, Vector: vecs[k]}
		}
	}
	ids := make([]int64, len(batch))
	versions := 0
	err = e.b.Update(ctx, func(tx Tx) error {
		// Every imported version is bound to an audit entry, like every
		// version the engine writes (provenance: its source's hash).
		au := e.auditor(tx)
		au.Batch = true
		bind := func(m *Memory) error {
			d := map[string]any{"namespace": m.Namespace, "status": m.Status}
			if m.Source != "" {
				d["source_sha256"] = govern.SourceHash(m.Source)
			}
			return au.Stage("import", m, d)
		}
		for k, i := range batch {
			hist := items[i]
			first := *hist[0]
			if err := tx.Insert(&first); err != nil {
				return fmt.Errorf("%s: %w", names[i], err)
			}
			if err := bind(&first); err != nil {
				return err
			}
			ids[k] = first.ID
			for _, v := range hist[1:] {
				next := *v
				next.ID = first.ID
				if err := tx.Put(&next); err != nil {
					return fmt.Errorf("%s version %d: %w", names[i], v.Version, err)
				}
				if err := bind(&next); err != nil {
					return err
				}
			}
			versions += len(hist)
		}
		return au.Close()
	})
	if err != nil {
		return err
	}
	for k, i := range batch {
		rep.IDs[i] = ids[k]
	}
	rep.Imported += len(batch)
	rep.Versions += versions
	rep.Embedded += len(texts)
	rep.KeptEmbeddings += kept
	return nil
}

// importKey identifies a memory across stores: namespace and creation time
// (the first version's content decides between memories created together).
type importKey struct {
	ns      string
	created time.Time
}

type importIndex map[importKey][]*Memory

// importKeys indexes the store's memories (every namespace and status) by
// importKey.
func (e *Engine) importKeys(ctx context.Context) (importIndex, error) {
	idx := importIndex{}
	err := e.b.View(ctx, func(tx ReadTx) error {
		return tx.Scan(ScanOptions{}, func(m *Memory) error {
			k := importKey{m.Namespace, m.CreatedAt.UTC()}
			idx[k] = append(idx[k], &Memory{ID: m.ID, Version: m.Version, Content: m.Content})
			return nil
		})
	})
	return idx, err
}

// find returns the id of a stored memory that first is a copy of.
func (idx importIndex) find(ctx context.Context, e *Engine, first *Memory) (int64, bool, error) {
	for _, m := range idx[importKey{first.Namespace, first.CreatedAt}] {
		content := m.Content
		if m.Version > 1 {
			err := e.b.View(ctx, func(tx ReadTx) error {
				v1, err := tx.Get(m.ID, 1)
				if err == nil {
					content = v1.Content
				}
				return err
			})
			if err != nil {
				return 0, false, fmt.Errorf("read memory %d version 1: %w", m.ID, err)
			}
		}
		if content == first.Content {
			return m.ID, true, nil
		}
	}
	return 0, false, nil
}

// Package importing is Import's engine: it validates memories with their
// history and the edges between them, skips what the store already holds,
// embeds what needs it and writes the rest in batches, binding every version
// to an audit entry. The formats (JSONL, MemU, turns) are core/transfer's.
//
// It is written over core/driver's transactions and never imports the
// engine: the engine checks that the caller may reach the whole store and
// passes its namespace, embedder and clock (Deps). Core re-exports Memory,
// Edge, Request and Report as ImportedMemory, ImportedEdge, ImportRequest
// and ImportReport.
package importing

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/internal/check"
	"github.com/memos-go/memos/core/internal/govern"
)

// Memory is one memory with its whole history, as an export or
// another memory system holds it: Versions oldest first. Import gives it a
// new id and numbers its versions 1..n; every other field is kept as given
// (content, times, trust, status, validity, access statistics, metadata).
type Memory struct {
	Versions []*driver.Memory
	// Name is how errors name it, e.g. "line 3 (memory 7)" ("": "memory N
	// of the import", counting from 1).
	Name string
}

// Edge is an edge between two memories of the same import, named by
// their index in Request.Memories. Its Type, Weight, CreatedAt and
// Source are kept; Edge.From and Edge.To are ignored.
type Edge struct {
	From, To int
	Edge     driver.Edge
	// Name is how errors name it ("": "edge N of the import").
	Name string
}

// Request is what Import stores.
type Request struct {
	Memories []Memory
	Edges    []Edge
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

// Report says what Import stored.
type Report struct {
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

// Deps is what an import reads from the engine.
type Deps struct {
	Backend driver.Backend
	// Namespace is where a version that names none goes.
	Namespace string
	// Model is the embedder's (zero without one); Embed embeds texts with
	// it, returning unit-length vectors (nil, nil without an embedder).
	Model driver.ModelInfo
	Embed func(ctx context.Context, texts []string) ([][]float32, error)
	// Clock is the engine's clock (UTC).
	Clock func() time.Time
}

// batchSize is how many memories one transaction of an import writes.
const batchSize = 256

// Run stores req as core.Engine.Import documents. On an error before
// anything is written the report is nil; after, it counts what was.
func Run(ctx context.Context, d Deps, req Request) (*Report, error) {
	items, names, err := validate(d, req)
	if err != nil {
		return nil, err
	}
	rep := &Report{DryRun: req.DryRun, IDs: make([]int64, len(items))}
	existing, err := keys(ctx, d.Backend)
	if err != nil {
		return nil, err
	}
	var todo []int
	for i, hist := range items {
		id, ok, err := existing.find(ctx, d.Backend, hist[0])
		if err != nil {
			return nil, err
		}
		if ok {
			rep.IDs[i] = id
			rep.Skipped++
			continue
		}
		todo = append(todo, i)
	}
	if req.DryRun {
		if err := dryRun(ctx, d.Backend, req, items, todo, rep); err != nil {
			return nil, err
		}
		return rep, nil
	}
	for start := 0; start < len(todo); start += batchSize {
		batch := todo[start:min(start+batchSize, len(todo))]
		if err := writeBatch(ctx, d, req.KeepEmbeddings, items, names, batch, rep); err != nil {
			return rep, fmt.Errorf("after %d of %d memories: %w", rep.Imported, len(todo), err)
		}
		if req.Progress != nil {
			req.Progress(start+len(batch), len(todo))
		}
	}
	if err := writeEdges(ctx, d, req, rep); err != nil {
		return rep, fmt.Errorf("edges: %w", err)
	}
	return rep, nil
}

// dryRun counts in rep what an import of the memories items[i] for i in
// todo and of req's edges would store.
func dryRun(ctx context.Context, b driver.Backend, req Request, items [][]*driver.Memory, todo []int, rep *Report) error {
	rep.Imported = len(todo)
	for _, i := range todo {
		rep.Versions += len(items[i])
	}
	return b.View(ctx, func(tx driver.ReadTx) error {
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
}

// writeEdges links req's edges between the stored memories, skipping those
// the store holds as they are, and appends the import's audit entry.
func writeEdges(ctx context.Context, d Deps, req Request, rep *Report) error {
	return d.Backend.Update(ctx, func(tx driver.Tx) error {
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
		if _, err := govern.Append(tx, d.Clock, "import", 0, string(detail)); err != nil {
			return err
		}
		rep.Edges, rep.SkippedEdges = added, skipped
		return nil
	})
}

// edgeHeld reports whether the store holds edge as it is: same ends, type,
// weight and source.
func edgeHeld(tx driver.ReadTx, edge driver.Edge) (bool, error) {
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

// validate validates the request and returns each memory's versions,
// normalised (namespace default, version numbers, UTC times) and copied,
// and the names errors give each.
func validate(d Deps, req Request) ([][]*driver.Memory, []string, error) {
	items := make([][]*driver.Memory, len(req.Memories))
	names := make([]string, len(req.Memories))
	for i, im := range req.Memories {
		name := im.Name
		if name == "" {
			name = fmt.Sprintf("memory %d of the import", i+1)
		}
		names[i] = name
		if len(im.Versions) == 0 {
			return nil, nil, driver.Invalidf("%s has no versions", name)
		}
		hist := make([]*driver.Memory, len(im.Versions))
		for j, v := range im.Versions {
			if v == nil {
				return nil, nil, driver.Invalidf("%s: version %d is missing", name, j+1)
			}
			m := v.Clone()
			m.ID, m.Version = 0, j+1
			if m.Namespace == "" {
				m.Namespace = d.Namespace
			}
			if m.Status == "" {
				m.Status = driver.StatusActive
			}
			m.Trust.Score = govern.CanonicalFloat(m.Trust.Score)
			m.CreatedAt, m.UpdatedAt = utc(m.CreatedAt), utc(m.UpdatedAt)
			m.ValidFrom, m.ValidTo, m.LastAccessedAt = utc(m.ValidFrom), utc(m.ValidTo), utc(m.LastAccessedAt)
			if m.CreatedAt.IsZero() {
				return nil, nil, driver.Invalidf("%s version %d has no creation time", name, j+1)
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
				return nil, nil, driver.Invalidf("%s version %d: every version must keep the first one's namespace and creation time", name, j+1)
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
			return nil, nil, driver.Invalidf("%s joins memories %d and %d of the import, which has %d", name, ie.From+1, ie.To+1, len(items))
		}
		ie.Edge.From, ie.Edge.To = int64(ie.From)+1, int64(ie.To)+1 // for the self-link check
		if err := check.Edge(&ie.Edge); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		ie.Edge.CreatedAt = utc(ie.Edge.CreatedAt)
		if ie.Edge.CreatedAt.IsZero() {
			ie.Edge.CreatedAt = d.Clock()
		}
	}
	return items, names, nil
}

// writeBatch embeds and writes the memories items[i] for i in batch in one
// transaction, and records their new ids in rep.
func writeBatch(ctx context.Context, d Deps, keep bool, items [][]*driver.Memory, names []string, batch []int, rep *Report) error {
	var texts []string
	var targets []*driver.Memory
	kept := 0
	for _, i := range batch {
		for _, m := range items[i] {
			if keep && m.Embedding.Model == d.Model.ID && m.Embedding.Dim() == d.Model.Dim {
				if err := check.Vectors(d.Model, [][]float32{m.Embedding.Vector}, 1); err != nil {
					return fmt.Errorf("%s version %d: %w", names[i], m.Version, err)
				}
				kept++
				continue
			}
			texts, targets = append(texts, m.Content), append(targets, m)
		}
	}
	vecs, err := d.Embed(ctx, texts)
	if err != nil {
		return err
	}
	for k, m := range targets {
		m.Embedding = driver.Embedding{}
		if vecs != nil {
			m.Embedding = driver.Embedding{Model: d.Model.ID, Vector: vecs[k]}
		}
	}
	ids := make([]int64, len(batch))
	versions := 0
	err = d.Backend.Update(ctx, func(tx driver.Tx) error {
		// Every imported version is bound to an audit entry, like every
		// version the engine writes (provenance: its source's hash).
		au := govern.NewAuditor(tx, d.Clock)
		au.Batch = true
		bind := func(m *driver.Memory) error {
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

// key identifies a memory across stores: namespace and creation time
// (the first version's content decides between memories created together).
type key struct {
	ns      string
	created time.Time
}

type index map[key][]*driver.Memory

// keys indexes the store's memories (every namespace and status) by key.
func keys(ctx context.Context, b driver.Backend) (index, error) {
	idx := index{}
	err := b.View(ctx, func(tx driver.ReadTx) error {
		return tx.Scan(driver.ScanOptions{}, func(m *driver.Memory) error {
			k := key{m.Namespace, m.CreatedAt.UTC()}
			idx[k] = append(idx[k], &driver.Memory{ID: m.ID, Version: m.Version, Content: m.Content})
			return nil
		})
	})
	return idx, err
}

// find returns the id of a stored memory that first is a copy of.
func (idx index) find(ctx context.Context, b driver.Backend, first *driver.Memory) (int64, bool, error) {
	for _, m := range idx[key{first.Namespace, first.CreatedAt}] {
		content := m.Content
		if m.Version > 1 {
			err := b.View(ctx, func(tx driver.ReadTx) error {
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

func utc(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC().Round(0)
}

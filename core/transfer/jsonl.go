// Package transfer moves memories in and out of a memos store: the JSONL export
// format (a versioned, documented backup that any store can restore) and
// readers for other memory systems' stores (MemU's memory.db).
//
// Every reader turns its input into a core.ImportRequest and checks all of
// it before anything is written, so a bad file is an error naming its line
// or row and imports nothing; Engine.Import then writes it idempotently.
package transfer

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/memos-go/memos/core"
)

// FormatVersion is the version of the JSONL format Export writes.
const FormatVersion = 1

// Header is the first line of an export.
type Header struct {
	// Format is always "memos-export"; Version is FormatVersion.
	Format     string    `json:"format"`
	Version    int       `json:"version"`
	ExportedAt time.Time `json:"exported_at"`
	// Model is the embedding model of the exported store. Vectors are not
	// exported: an import embeds with the target store's model.
	Model core.ModelInfo `json:"model"`
	// Namespaces the export was limited to (none: every namespace).
	Namespaces []string `json:"namespaces,omitempty"`
	// Memories and Edges count the lines that follow, so that a truncated
	// file is detected.
	Memories int `json:"memories"`
	Edges    int `json:"edges"`
}

// Line is one line after the header: a memory (Kind "memory", ID and
// Versions) or an edge (Kind "edge", Edge). IDs are the exported store's;
// an import maps them to new ones.
type Line struct {
	Kind     string         `json:"kind"`
	ID       int64          `json:"id,omitempty"`
	Versions []*core.Memory `json:"versions,omitempty"`
	Edge     *core.Edge     `json:"edge,omitempty"`
}

const formatName = "memos-export"

// ExportReport says what Export wrote.
type ExportReport struct {
	Memories int `json:"memories"`
	Versions int `json:"versions"`
	Edges    int `json:"edges"`
	// DroppedEdges lead to memories outside the exported namespaces.
	DroppedEdges int `json:"dropped_edges"`
}

// Export writes the memories opts selects (every version, validity, trust,
// status, metadata and access statistics) and the edges between them to w:
// a header line, one line per memory in id order, then one line per edge.
// Edges that lead outside the export are left out and counted.
func Export(ctx context.Context, eng *core.Engine, w io.Writer, opts core.ExportOptions) (*ExportReport, error) {
	rep := &ExportReport{}
	var mems []Line
	var edges []core.Edge
	exported := map[int64]bool{}
	err := eng.Export(ctx, opts, func(m core.ExportedMemory) error {
		id := m.Versions[0].ID
		exported[id] = true
		mems = append(mems, Line{Kind: "memory", ID: id, Versions: m.Versions})
		edges = append(edges, m.Edges...)
		rep.Versions += len(m.Versions)
		return nil
	})
	if err != nil {
		return nil, err
	}
	kept := edges[:0]
	for _, e := range edges {
		if exported[e.From] && exported[e.To] {
			kept = append(kept, e)
		} else {
			rep.DroppedEdges++
		}
	}
	rep.Memories, rep.Edges = len(mems), len(kept)

	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	h := Header{Format: formatName, Version: FormatVersion, ExportedAt: time.Now().UTC(),
		Model: eng.Model(), Namespaces: opts.Namespaces, Memories: len(mems), Edges: len(kept)}
	if err := enc.Encode(h); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	for _, l := range mems {
		if err := enc.Encode(l); err != nil {
			return nil, fmt.Errorf("export: memory %d: %w", l.ID, err)
		}
	}
	for i := range kept {
		if err := enc.Encode(Line{Kind: "edge", Edge: &kept[i]}); err != nil {
			return nil, fmt.Errorf("export: edge %d→%d: %w", kept[i].From, kept[i].To, err)
		}
	}
	if err := bw.Flush(); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	return rep, nil
}

// maxLine bounds one line of an export: a memory with many versions of the
// largest content (64 KiB each, escaped) fits many times over.
const maxLine = 64 << 20

// ReadJSONL reads an export and returns the header and what to import. It
// reads and checks the whole input first; an error names the line
// (1-based) and nothing should be imported.
func ReadJSONL(r io.Reader) (*Header, *core.ImportRequest, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	var h *Header
	req := &core.ImportRequest{}
	index := map[int64]int{} // exported id → index in req.Memories
	n := 0
	for sc.Scan() {
		n++
		b := sc.Bytes()
		if len(b) == 0 {
			continue
		}
		if h == nil {
			hd, err := readHeader(b)
			if err != nil {
				return nil, nil, fmt.Errorf("line %d: %w", n, err)
			}
			h = hd
			continue
		}
		var l Line
		if err := strictUnmarshal(b, &l); err != nil {
			return nil, nil, fmt.Errorf("line %d: %w", n, err)
		}
		switch l.Kind {
		case "memory":
			if l.ID <= 0 || len(l.Versions) == 0 {
				return nil, nil, fmt.Errorf("line %d: %w: a memory line needs a positive id and at least one version", n, core.ErrInvalid)
			}
			if _, dup := index[l.ID]; dup {
				return nil, nil, fmt.Errorf("line %d: %w: memory %d appears twice", n, core.ErrInvalid, l.ID)
			}
			for i, v := range l.Versions {
				if v == nil || v.Version != i+1 {
					return nil, nil, fmt.Errorf("line %d: %w: memory %d: versions must be 1, 2, … in order", n, core.ErrInvalid, l.ID)
				}
			}
			index[l.ID] = len(req.Memories)
			req.Memories = append(req.Memories, core.ImportedMemory{Versions: l.Versions, Name: fmt.Sprintf("line %d (memory %d)", n, l.ID)})
		case "edge":
			if l.Edge == nil {
				return nil, nil, fmt.Errorf("line %d: %w: an edge line needs an edge", n, core.ErrInvalid)
			}
			from, ok1 := index[l.Edge.From]
			to, ok2 := index[l.Edge.To]
			if !ok1 || !ok2 {
				return nil, nil, fmt.Errorf("line %d: %w: edge %d→%d names a memory the file does not hold (before it)", n, core.ErrInvalid, l.Edge.From, l.Edge.To)
			}
			req.Edges = append(req.Edges, core.ImportedEdge{From: from, To: to, Edge: *l.Edge,
				Name: fmt.Sprintf("line %d (edge %d→%d)", n, l.Edge.From, l.Edge.To)})
		default:
			return nil, nil, fmt.Errorf("line %d: %w: unknown kind %q (want memory or edge)", n, core.ErrInvalid, l.Kind)
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, nil, fmt.Errorf("line %d: %w: longer than %d bytes", n+1, core.ErrInvalid, maxLine)
		}
		return nil, nil, fmt.Errorf("line %d: %w", n+1, err)
	}
	if h == nil {
		return nil, nil, fmt.Errorf("%w: the file is empty (an export starts with a header line)", core.ErrInvalid)
	}
	if len(req.Memories) != h.Memories || len(req.Edges) != h.Edges {
		return nil, nil, fmt.Errorf("%w: the header announces %d memories and %d edges, the file holds %d and %d: it is truncated or was edited",
			core.ErrInvalid, h.Memories, h.Edges, len(req.Memories), len(req.Edges))
	}
	return h, req, nil
}

func readHeader(b []byte) (*Header, error) {
	var h Header
	if err := strictUnmarshal(b, &h); err != nil {
		return nil, fmt.Errorf("%w (the first line of an export is its header)", err)
	}
	if h.Format != formatName {
		return nil, fmt.Errorf("%w: not a memos export (format %q, want %q)", core.ErrInvalid, h.Format, formatName)
	}
	if h.Version < 1 || h.Version > FormatVersion {
		return nil, fmt.Errorf("%w: export format version %d; this memos reads versions 1 to %d", core.ErrInvalid, h.Version, FormatVersion)
	}
	return &h, nil
}

// strictUnmarshal decodes one JSON value, rejecting unknown fields,
// trailing data and text that is not valid UTF-8.
func strictUnmarshal(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: not a valid line: %v", core.ErrInvalid, err)
	}
	if dec.More() {
		return fmt.Errorf("%w: more than one JSON value on the line", core.ErrInvalid)
	}
	return core.CheckJSONUTF8(b)
}

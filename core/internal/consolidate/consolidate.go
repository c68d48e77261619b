// Package consolidate is memos' consolidation (memos consolidate, memos
// dream): it merges duplicates, archives stale memories and distils
// clusters into knowledge pages, never deleting anything.
//
// It does not import the engine: Run gets what it reads and writes — the
// backend, a scoped read, the write path's PutVersion, the vector index's
// search, the embedder and the summarizer — as Deps. The engine (package
// core) checks the request, holds the configuration and re-exports the
// types of its API (ConsolidateConfig, ConsolidateReport, …) as aliases.
package consolidate

import (
	"context"
	"slices"
	"time"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/internal/govern"
)

// Config holds the thresholds of consolidation; zero fields take
// the defaults noted (see Defaults), chosen on the LoCoMo dev turns.
type Config struct {
	// Two memories are duplicates when their embeddings' cosine is at least
	// DuplicateSimilarity (0.9) and their words' Jaccard overlap at least
	// DuplicateOverlap (0.6).
	DuplicateSimilarity float64 `koanf:"duplicate_similarity" json:"duplicate_similarity"`
	DuplicateOverlap    float64 `koanf:"duplicate_overlap" json:"duplicate_overlap"`
	// A memory is stale when its significance is at most StaleSignificance
	// (2) and it was last used (accessed, else created) more than StaleAfter
	// (4320h, 180 days) ago; or when its validity ended more than StaleAfter
	// ago (it was superseded). Lessons, knowledge pages and memories of
	// significance 7 or more are never stale.
	StaleSignificance int           `koanf:"stale_significance" json:"stale_significance"`
	StaleAfter        time.Duration `koanf:"stale_after" json:"stale_after"`
	// Knowledge pages gather clusters of at least PageMinSize (5) and at most
	// PageMaxSize (20) memories whose embeddings' cosine to the cluster's
	// seed is at least PageSimilarity (0.35, chosen by leave-one-conversation-
	// out on LoCoMo dev; see the README).
	PageMinSize    int     `koanf:"page_min_size" json:"page_min_size"`
	PageMaxSize    int     `koanf:"page_max_size" json:"page_max_size"`
	PageSimilarity float64 `koanf:"page_similarity" json:"page_similarity"`
	// Interval is how often a long-running front-end (memos serve) runs a
	// dream (consolidation with pages) on its own; 0 means never.
	Interval time.Duration `koanf:"interval" json:"interval"`
}

// Defaults returns c with every zero field at its default.
func Defaults(c Config) Config {
	def := func(v *float64, d float64) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.DuplicateSimilarity, 0.9)
	def(&c.DuplicateOverlap, 0.6)
	def(&c.PageSimilarity, 0.35)
	if c.StaleSignificance == 0 {
		c.StaleSignificance = 2
	}
	if c.StaleAfter == 0 {
		c.StaleAfter = 180 * 24 * time.Hour
	}
	if c.PageMinSize == 0 {
		c.PageMinSize = 5
	}
	if c.PageMaxSize == 0 {
		c.PageMaxSize = 20
	}
	return c
}

// Validate checks c (with defaults applied): ErrInvalid names the setting
// at fault.
func Validate(c Config) error {
	switch {
	case c.DuplicateSimilarity < 0 || c.DuplicateSimilarity > 1, c.DuplicateOverlap < 0 || c.DuplicateOverlap > 1,
		c.PageSimilarity < 0 || c.PageSimilarity > 1:
		return driver.Invalidf("consolidate: similarities and overlaps must be in [0,1]")
	case c.StaleSignificance < 0 || c.StaleSignificance > 10:
		return driver.Invalidf("consolidate: stale_significance %d is outside 0–10", c.StaleSignificance)
	case c.StaleAfter < 0 || c.Interval < 0:
		return driver.Invalidf("consolidate: stale_after and interval must not be negative")
	case c.PageMinSize < 2 || c.PageMaxSize < c.PageMinSize:
		return driver.Invalidf("consolidate: page sizes must satisfy 2 ≤ page_min_size ≤ page_max_size")
	}
	return nil
}

// Request says what Run does.
type Request struct {
	// DryRun reports what would change and writes nothing.
	DryRun bool
	// Pages also builds or refreshes knowledge pages (memos dream); it needs
	// a Summarizer (Options.Summarizer) and an embedder.
	Pages bool
}

// Report says what Run did (or, in a dry run, would do).
type Report struct {
	DryRun bool `json:"dry_run,omitempty"`
	// Before and After count the namespace's active memories.
	Before   int           `json:"before"`
	After    int           `json:"after"`
	Merges   []Merge       `json:"merges"`
	Archived []Archival    `json:"archived"`
	Pages    []PageChange  `json:"pages"`
	Took     time.Duration `json:"took_ns"`
	// Notes say what was skipped and why (e.g. no embedder: no duplicates).
	Notes []string `json:"notes,omitempty"`
}

// Merge is one group of duplicates: the survivor keeps the others'
// entities, sources and access counts and is derived_from them; they are
// archived.
type Merge struct {
	Survivor int64   `json:"survivor"`
	Merged   []int64 `json:"merged"`
}

// Archival is a memory archived as stale.
type Archival struct {
	ID     int64  `json:"id"`
	Reason string `json:"reason"`
}

// PageChange is a knowledge page written (created or refreshed) or left
// alone (unchanged).
type PageChange struct {
	ID      int64   `json:"id"` // 0 in a dry run for a new page
	Action  string  `json:"action"`
	Members []int64 `json:"members"`
}

// Metadata keys consolidation writes.
const (
	metaPage          = "page"            // true on a knowledge page
	metaPageMembers   = "page_members"    // the member ids a page stands for
	metaMergedFrom    = "merged_from"     // ids merged into a survivor
	metaMergedSources = "merged_sources"  // their sources
	metaArchived      = "archived_reason" // why consolidation archived a memory
)

// Deps is what consolidation reads and writes through, all of one engine
// handle.
type Deps struct {
	Backend driver.Backend
	// Namespace is the one consolidated.
	Namespace string
	// Model is the embedding model; memories embedded by another are left
	// alone by duplicates and pages.
	Model driver.ModelInfo
	// Search searches the vector index; nil without an embedder (no
	// duplicates, no pages).
	Search func(ctx context.Context, q []float32, k int, f driver.VectorFilter) ([]driver.Hit, error)
	// Sync brings the vector index up to date with the store.
	Sync func(ctx context.Context) error
	// Embed embeds page texts (nil, nil without an embedder).
	Embed func(ctx context.Context, texts []string) ([][]float32, error)
	// Summarizer writes the pages' text; needed for Request.Pages.
	Summarizer driver.Summarizer
	// Get reads the current version of a memory in the handle's scope.
	Get func(tx driver.ReadTx, id int64) (*driver.Memory, error)
	// PutVersion writes next as the version after cur, with the audit
	// entry (action op) that binds it.
	PutVersion func(tx driver.Tx, au *govern.Auditor, op string, cur, next *driver.Memory, detail map[string]any) error
	// Clock is the engine's clock.
	Clock func() time.Time
}

// run is one consolidation: its dependencies, thresholds and report, and
// the plan — the namespace's active memories as the run leaves them. Each
// step takes out what it merges or archives and updates what it changes,
// in a dry run as in the run, so that the steps after it decide on the same
// memories either way.
type run struct {
	Deps
	cfg  Config
	rep  *Report
	mems map[int64]*driver.Memory
}

// Run consolidates d.Namespace (see Engine.Consolidate): duplicates (with
// a Search), stale memories, then, with req.Pages, knowledge pages. Each
// merge group, each batch of archivals and each page is its own
// transaction. The report is nil when the namespace cannot be read, and
// otherwise says what was done, also when a step failed.
func Run(ctx context.Context, d Deps, cfg Config, req Request) (*Report, error) {
	r := &run{Deps: d, cfg: cfg, rep: &Report{DryRun: req.DryRun, Merges: []Merge{}, Archived: []Archival{}, Pages: []PageChange{}}}
	mems, err := r.active(ctx)
	if err != nil {
		return nil, err
	}
	r.mems = mems
	rep := r.rep
	rep.Before = len(mems)
	if r.Search == nil {
		rep.Notes = append(rep.Notes, "no embedder: duplicates are not looked for")
	} else if err := r.mergeDuplicates(ctx); err != nil {
		return rep, err
	}
	if err := r.archiveStale(ctx); err != nil {
		return rep, err
	}
	removed := rep.Before - len(mems) // merged and archived
	if req.Pages {
		if err := r.buildPages(ctx, removed); err != nil {
			return rep, err
		}
	}
	if rep.DryRun {
		rep.After = len(mems)
		for _, p := range rep.Pages {
			if p.Action == "created" {
				rep.After++
			}
		}
		return rep, nil
	}
	if err := r.Sync(ctx); err != nil {
		return rep, err
	}
	after, err := r.active(ctx)
	if err != nil {
		return rep, err
	}
	rep.After = len(after)
	return rep, nil
}

// active reads the namespace's active memories, by id.
func (r *run) active(ctx context.Context) (map[int64]*driver.Memory, error) {
	out := map[int64]*driver.Memory{}
	err := r.Backend.View(ctx, func(tx driver.ReadTx) error {
		return tx.Scan(driver.ScanOptions{Filter: driver.Filter{Namespaces: []string{r.Namespace}, Statuses: []driver.Status{driver.StatusActive}}}, func(m *driver.Memory) error {
			out[m.ID] = m
			return nil
		})
	})
	return out, err
}

// consolidatable reports whether consolidation may merge or archive m:
// lessons and knowledge pages are left alone.
func consolidatable(m *driver.Memory) bool {
	return m.Type != driver.TypeLesson && m.Type != driver.TypeKnowledge && m.Pool != driver.PoolKnowledge
}

func sortedIDs(m map[int64]*driver.Memory) []int64 {
	ids := make([]int64, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// unpaged filters vector searches to namespace ns outside the knowledge
// pool, so that pages never crowd their own members out of a search.
func unpaged(ns string) driver.VectorFilter {
	return driver.VectorFilter{Namespaces: []string{ns}, Pools: []driver.Pool{driver.PoolRaw, driver.PoolMemory}}
}

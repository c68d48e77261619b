package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"time"

	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/core/transfer"
)

// This file is the table: the request and answer types of every operation
// and the one handler of each, which calls core.Engine.

// Attrs are a memory's attributes as a caller gives them.
type Attrs struct {
	Type             core.Type       `json:"type,omitempty" jsonschema:"enum=fact,enum=preference,enum=event,enum=relationship,enum=turn,enum=document,enum=lesson,enum=knowledge,enum=note" jsonschema_description:"What kind of thing it records (default fact)."`
	Pool             core.Pool       `json:"pool,omitempty" jsonschema:"enum=raw,enum=memory,enum=knowledge" jsonschema_description:"raw (verbatim turns, documents), memory (distilled facts, preferences, events, relationships) or knowledge (lessons, knowledge pages); default: the type's pool."`
	Significance     int             `json:"significance,omitempty" jsonschema:"minimum=1,maximum=10" jsonschema_description:"1-2 passing observation, 3-4 useful context, 5-6 important fact or preference (default 5), 7-8 key personal information or decision, 9-10 core identity or security-sensitive."`
	Entities         []string        `json:"entities,omitempty" jsonschema_description:"Names of the people, places, projects or tools it is about."`
	EmotionalContext string          `json:"emotional_context,omitempty" jsonschema_description:"How the user felt, e.g. frustrated, excited."`
	Source           string          `json:"source,omitempty" jsonschema_description:"Where it came from, e.g. conversation:42#turn-7 or file:notes.md."`
	Session          string          `json:"session,omitempty" jsonschema_description:"The conversation or run it belongs to."`
	Trust            core.TrustLevel `json:"trust,omitempty" jsonschema:"enum=certain,enum=inferred,enum=imported,enum=contradicted" jsonschema_description:"certain (the user said so), inferred (default), imported, contradicted."`
	TrustScore       *float64        `json:"trust_score,omitempty" jsonschema:"minimum=0,maximum=1" jsonschema_description:"Trust in [0,1] (default: the level's)."`
	ValidFrom        string          `json:"valid_from,omitempty" jsonschema_description:"When it became true: RFC3339 time or YYYY-MM-DD (default: since always)."`
	ValidTo          string          `json:"valid_to,omitempty" jsonschema_description:"When it stopped being true: RFC3339 time or YYYY-MM-DD (default: still true)."`
	Metadata         map[string]any  `json:"metadata,omitempty" jsonschema_description:"Free JSON metadata (at most 16 KiB)."`
	Status           core.Status     `json:"status,omitempty" jsonschema:"enum=active,enum=archived,enum=quarantined" jsonschema_description:"active (default), archived (kept, out of recall) or quarantined (held for review, out of recall)."`
}

func checkStatus(s core.Status) error {
	if s == "" {
		return nil
	}
	_, err := core.ParseStatus(string(s))
	return err
}

// CheckSignificance is the one check of a significance a caller gives: 0
// means the default (5), anything else must be 1–10.
func CheckSignificance(n int) error {
	if n < 0 || n > 10 {
		return SignificanceError(n)
	}
	return nil
}

// SignificanceError says that n is not a significance.
func SignificanceError(n int) error {
	return core.Invalidf("significance %d is outside 1–10 (1–2 passing, 3–4 context, 5–6 important, 7–8 key, 9–10 core)", n)
}

// input builds the engine's Input from content and a.
func (a *Attrs) input(content string) (core.Input, error) {
	in := core.Input{Content: content, Type: a.Type, Pool: a.Pool, Significance: a.Significance,
		Entities: a.Entities, EmotionalContext: a.EmotionalContext, Source: a.Source, Session: a.Session,
		TrustLevel: a.Trust, TrustScore: a.TrustScore, Metadata: a.Metadata, Status: a.Status}
	if err := CheckSignificance(a.Significance); err != nil {
		return in, err
	}
	if err := checkStatus(a.Status); err != nil {
		return in, err
	}
	var err error
	if in.ValidFrom, err = ParseTime("valid_from", a.ValidFrom); err != nil {
		return in, err
	}
	in.ValidTo, err = ParseTime("valid_to", a.ValidTo)
	return in, err
}

// Provenance says how a new memory relates to others and whether it waits
// for review.
type Provenance struct {
	Quarantine  bool    `json:"quarantine,omitempty" jsonschema_description:"Hold it for a person's review (memos_review) instead of letting it into recall."`
	Contradicts []int64 `json:"contradicts,omitempty" jsonschema_description:"Ids of memories this one contradicts (each gets a contradicts edge; the governance policy decides who loses)."`
	DerivedFrom []int64 `json:"derived_from,omitempty" jsonschema_description:"Ids of memories this one was derived from (a summary, a conclusion)."`
}

func (p *Provenance) apply(in *core.Input) {
	in.Quarantine, in.Contradicts, in.DerivedFrom = p.Quarantine, p.Contradicts, p.DerivedFrom
}

// RememberIn is one memory to store.
type RememberIn struct {
	Scope
	Content string `json:"content" jsonschema_description:"The memory itself, one self-contained statement (at most 64 KiB), e.g. \"Alice prefers open-source tools\"."`
	Attrs
	Provenance
}

// Item is one memory of a batch.
type Item struct {
	Content string `json:"content" jsonschema_description:"The memory itself."`
	Attrs
	Provenance
}

// RememberBatchIn is several memories stored in one transaction.
type RememberBatchIn struct {
	Scope
	Memories []Item `json:"memories" jsonschema:"minItems=1,maxItems=1000" jsonschema_description:"The memories, stored all or none."`
}

// TurnIn is one turn of a conversation.
type TurnIn struct {
	Speaker string `json:"speaker,omitempty" jsonschema_description:"Who said it, e.g. user or assistant or a name."`
	Text    string `json:"text" jsonschema_description:"What was said, verbatim."`
	Time    string `json:"time,omitempty" jsonschema_description:"When it was said (RFC3339 or YYYY-MM-DD)."`
}

// CaptureIn is a conversation to capture.
type CaptureIn struct {
	Scope
	Session   string   `json:"session" jsonschema_description:"Names the conversation, e.g. conversation:42; capturing the same turns again stores nothing new."`
	Turns     []TurnIn `json:"turns" jsonschema:"minItems=1" jsonschema_description:"The turns, in order."`
	NoExtract bool     `json:"no_extract,omitempty" jsonschema_description:"Store the turns only, without extracting memories from them."`
}

// MemoriesOut lists memories.
type MemoriesOut struct {
	Memories []*core.Memory `json:"memories"`
}

// IDIn names a memory, optionally one of its versions.
type IDIn struct {
	Scope
	ID      int64 `json:"id" jsonschema:"minimum=1" jsonschema_description:"The memory id."`
	Version int   `json:"version,omitempty" jsonschema:"minimum=1" jsonschema_description:"An older version (default: the current one)."`
}

// HistoryIn names a memory.
type HistoryIn struct {
	Scope
	ID int64 `json:"id" jsonschema:"minimum=1" jsonschema_description:"The memory id."`
}

// VersionsOut lists a memory's versions, oldest first.
type VersionsOut struct {
	ID       int64          `json:"id"`
	Versions []*core.Memory `json:"versions"`
}

// UpdateIn changes a memory: only the fields given change. A text field
// given as "" is cleared (valid_from "": since always, valid_to "": still
// true); absent or null leaves it as it is. Metadata changes key by key.
type UpdateIn struct {
	Scope
	ID               int64           `json:"id" jsonschema:"minimum=1" jsonschema_description:"The memory to change."`
	Content          *string         `json:"content,omitempty" jsonschema_description:"New content."`
	Type             core.Type       `json:"type,omitempty" jsonschema:"enum=fact,enum=preference,enum=event,enum=relationship,enum=turn,enum=document,enum=lesson,enum=knowledge,enum=note" jsonschema_description:"New type."`
	Pool             core.Pool       `json:"pool,omitempty" jsonschema:"enum=raw,enum=memory,enum=knowledge" jsonschema_description:"New pool."`
	Significance     *int            `json:"significance,omitempty" jsonschema:"minimum=1,maximum=10" jsonschema_description:"New significance, 1-10."`
	Entities         *[]string       `json:"entities,omitempty" jsonschema_description:"The new list of entity names (replaces the old one; [] removes them all)."`
	EmotionalContext *string         `json:"emotional_context,omitempty" jsonschema_description:"How the user felt (\"\" clears it)."`
	Source           *string         `json:"source,omitempty" jsonschema_description:"Where it came from (\"\" clears it)."`
	Session          *string         `json:"session,omitempty" jsonschema_description:"The conversation or run it belongs to (\"\" clears it)."`
	Trust            core.TrustLevel `json:"trust,omitempty" jsonschema:"enum=certain,enum=inferred,enum=imported,enum=contradicted" jsonschema_description:"New trust level (its score becomes the level's unless trust_score is given)."`
	TrustScore       *float64        `json:"trust_score,omitempty" jsonschema:"minimum=0,maximum=1" jsonschema_description:"New trust score in [0,1]."`
	ValidFrom        *string         `json:"valid_from,omitempty" jsonschema_description:"When it became true: RFC3339 time or YYYY-MM-DD (\"\" since always)."`
	ValidTo          *string         `json:"valid_to,omitempty" jsonschema_description:"When it stopped being true: RFC3339 time or YYYY-MM-DD (\"\" still true)."`
	Metadata         map[string]any  `json:"metadata,omitempty" jsonschema_description:"Metadata changes, key by key: a key with a value is set, a key with null is removed, keys not named stay."`
	Status           core.Status     `json:"status,omitempty" jsonschema:"enum=active,enum=archived,enum=quarantined" jsonschema_description:"New status: active, archived or quarantined."`
}

// RevertIn asks for a new version equal to an old one.
type RevertIn struct {
	Scope
	ID      int64 `json:"id" jsonschema:"minimum=1" jsonschema_description:"The memory."`
	Version int   `json:"version" jsonschema:"minimum=1" jsonschema_description:"The version to bring back."`
}

// LinkIn is a typed edge.
type LinkIn struct {
	Scope
	From   int64    `json:"from" jsonschema:"minimum=1" jsonschema_description:"The memory the edge starts at."`
	To     int64    `json:"to" jsonschema:"minimum=1" jsonschema_description:"The memory the edge ends at."`
	Type   string   `json:"type,omitempty" jsonschema_description:"relates_to (default), supports, contradicts, derived_from, temporal_precedes, supersedes, or a type the server's configuration declares (search.edge_factors)."`
	Weight *float64 `json:"weight,omitempty" jsonschema:"exclusiveMinimum=0" jsonschema_description:"Edge weight (default 1)."`
	Source string   `json:"source,omitempty" jsonschema_description:"Where the relation comes from."`
}

// UnlinkIn names an edge.
type UnlinkIn struct {
	Scope
	From int64  `json:"from" jsonschema:"minimum=1"`
	To   int64  `json:"to" jsonschema:"minimum=1"`
	Type string `json:"type,omitempty" jsonschema_description:"The edge type (default relates_to)."`
}

// UnlinkOut confirms a removed edge.
type UnlinkOut struct {
	From    int64  `json:"from"`
	To      int64  `json:"to"`
	Type    string `json:"type"`
	Removed bool   `json:"removed"`
}

// EdgesOut lists the edges of memory ID.
type EdgesOut struct {
	ID    int64       `json:"id"`
	Edges []core.Edge `json:"edges"`
}

// Filters are the clock and ranking options of search, explain and packs.
type Filters struct {
	Pools   []core.Pool `json:"pools,omitempty" jsonschema_description:"Only these pools: raw, memory, knowledge (default: all)."`
	Types   []core.Type `json:"types,omitempty" jsonschema_description:"Only these memory types (default: all)."`
	ValidAt string      `json:"valid_at,omitempty" jsonschema_description:"What was true at this time (RFC3339 or YYYY-MM-DD; default now, or as_of)."`
	AsOf    string      `json:"as_of,omitempty" jsonschema_description:"What the store believed at this time: each memory at its version current then."`
	MMR     bool        `json:"mmr,omitempty" jsonschema_description:"Re-rank so that paraphrases do not take every slot."`
	// IncludeQuarantined reads no further than the namespace and default,
	// as review does: whoever may read them may see their review queue.
	IncludeQuarantined bool    `json:"include_quarantined,omitempty" jsonschema_description:"Also return memories waiting in the review queue (of the namespace and default, as memos_review lists them)."`
	MMRLambda          float64 `json:"mmr_lambda,omitempty" jsonschema:"minimum=0,maximum=1" jsonschema_description:"MMR's balance of relevance against novelty."`
	// ReferenceTime is not a clock: it is when the question was asked.
	ReferenceTime string `json:"reference_time,omitempty" jsonschema_description:"When the question was asked (RFC3339 or YYYY-MM-DD; default now): what its time words, such as yesterday, last weekend or in May, are read against."`
}

func (f *Filters) clocks() (validAt, asOf time.Time, err error) {
	if validAt, err = ParseTime("valid_at", f.ValidAt); err != nil {
		return
	}
	asOf, err = ParseTime("as_of", f.AsOf)
	return
}

func (f *Filters) referenceTime() (time.Time, error) {
	return ParseTime("reference_time", f.ReferenceTime)
}

// SearchIn is a query and its filters.
type SearchIn struct {
	Scope
	Query    string `json:"query" jsonschema_description:"Natural language (default) or, with mode fts, FTS5 syntax: AND OR NOT \"phrase\" prefix* ( ) NEAR(a b, N)."`
	Mode     string `json:"mode,omitempty" jsonschema:"enum=hybrid,enum=keyword,enum=vector,enum=fts" jsonschema_description:"hybrid (default: keyword + vector fused), keyword, vector or fts."`
	Limit    int    `json:"limit,omitempty" jsonschema:"minimum=1,maximum=1000" jsonschema_description:"At most this many results (default 10)."`
	NoExpand bool   `json:"no_expand,omitempty" jsonschema_description:"No graph or session expansion."`
	Filters
}

func (in *SearchIn) request() (core.SearchRequest, error) {
	m, err := core.ParseMode(in.Mode)
	if err != nil {
		return core.SearchRequest{}, err
	}
	req := core.SearchRequest{Query: in.Query, Mode: m, Limit: in.Limit, Pools: in.Pools, Types: in.Types,
		MMR: in.MMR, MMRLambda: in.MMRLambda, NoExpand: in.NoExpand, IncludeQuarantined: in.IncludeQuarantined}
	if req.ValidAt, req.AsOf, err = in.clocks(); err != nil {
		return req, err
	}
	req.ReferenceTime, err = in.referenceTime()
	return req, err
}

// PackIn asks for a context pack.
type PackIn struct {
	Scope
	Query      string `json:"query,omitempty" jsonschema_description:"What the agent is about to work on, in plain language; required unless bootstrap."`
	Bootstrap  bool   `json:"bootstrap,omitempty" jsonschema_description:"Pack the namespace's most significant, most used memories for the start of a session (no query)."`
	Budget     int    `json:"budget,omitempty" jsonschema:"minimum=1,maximum=100000" jsonschema_description:"The most tokens (cl100k_base) the pack may take (default 800)."`
	Limit      int    `json:"limit,omitempty" jsonschema:"minimum=1,maximum=200" jsonschema_description:"The most memories considered (default 20)."`
	Lessons    int    `json:"lessons,omitempty" jsonschema_description:"The most lessons included (default 3; -1 none)."`
	Neighbours int    `json:"neighbours,omitempty" jsonschema_description:"The most graph neighbours included (default 5; -1 none)."`
	Filters
}

// Request is the engine's PackRequest for in.
func (in *PackIn) Request() (core.PackRequest, error) {
	req := core.PackRequest{Query: in.Query, Bootstrap: in.Bootstrap, Budget: in.Budget, Limit: in.Limit,
		Lessons: in.Lessons, Neighbours: in.Neighbours, Pools: in.Pools, Types: in.Types, MMR: in.MMR, MMRLambda: in.MMRLambda,
		IncludeQuarantined: in.IncludeQuarantined}
	var err error
	if req.ValidAt, req.AsOf, err = in.clocks(); err != nil {
		return req, err
	}
	req.ReferenceTime, err = in.referenceTime()
	return req, err
}

// SetValidityIn sets when a memory was true. A field left out keeps its
// current value; "" clears it (since always, still true).
type SetValidityIn struct {
	Scope
	ID        int64   `json:"id" jsonschema:"minimum=1" jsonschema_description:"The memory."`
	ValidFrom *string `json:"valid_from,omitempty" jsonschema_description:"When it became true (RFC3339 or YYYY-MM-DD; \"\" since always; absent: unchanged)."`
	ValidTo   *string `json:"valid_to,omitempty" jsonschema_description:"When it stopped being true (\"\" still true; absent: unchanged)."`
}

// SupersedeIn replaces a memory with a new one.
type SupersedeIn struct {
	Scope
	ID      int64  `json:"id" jsonschema:"minimum=1" jsonschema_description:"The memory that is no longer true."`
	Content string `json:"content" jsonschema_description:"What is true now."`
	Attrs
}

// ForgetIn names a memory to erase.
type ForgetIn struct {
	Scope
	ID     int64  `json:"id" jsonschema:"minimum=1" jsonschema_description:"The memory to erase."`
	Reason string `json:"reason,omitempty" jsonschema_description:"Why, recorded in the audit log (e.g. \"user asked\")."`
}

// ConsolidateIn asks for a consolidation pass over the namespace.
type ConsolidateIn struct {
	Scope
	DryRun bool `json:"dry_run,omitempty" jsonschema_description:"Report what would change and write nothing."`
	Pages  bool `json:"pages,omitempty" jsonschema_description:"Also distil clusters of memories into knowledge pages (needs the server's summarizer)."`
}

// Empty is a request with nothing but the namespace.
type Empty struct {
	Scope
}

// AuditOut is the result of verifying the audit log.
// ReviewIn selects a page of the review queue.
type ReviewIn struct {
	Scope
	After int64 `json:"after,omitempty" jsonschema:"minimum=0" jsonschema_description:"List the memories whose id is above this: the next of the page before (default: from the start)."`
	Limit int   `json:"limit,omitempty" jsonschema:"minimum=0,maximum=1000" jsonschema_description:"List at most this many (default: all)."`
}

// ReviewOut is the review queue, or a page of it.
type ReviewOut struct {
	Items []core.ReviewItem `json:"items"`
	// Next is the after of the page after this one (0: none follows).
	Next int64 `json:"next,omitempty"`
}

// ReleaseIn releases a quarantined memory into recall.
type ReleaseIn struct {
	Scope
	ID    int64           `json:"id" jsonschema:"minimum=1" jsonschema_description:"The quarantined memory."`
	Trust core.TrustLevel `json:"trust,omitempty" jsonschema:"enum=certain,enum=inferred,enum=imported,enum=contradicted" jsonschema_description:"Give it this trust level (default: keep its own)."`
	Note  string          `json:"note,omitempty" jsonschema_description:"Why, recorded in the audit log."`
}

// RejectIn rejects a quarantined memory (it is forgotten).
type RejectIn struct {
	Scope
	ID     int64  `json:"id" jsonschema:"minimum=1" jsonschema_description:"The quarantined memory."`
	Reason string `json:"reason" jsonschema_description:"Why it is rejected (required), recorded in the deletion certificate and the audit log."`
}

// LearnIn is a lesson: procedural guidance.
type LearnIn struct {
	Scope
	Guidance     string   `json:"guidance" jsonschema_description:"What to do, e.g. \"run the tests before pushing\"."`
	When         string   `json:"when,omitempty" jsonschema_description:"The situation it applies to, e.g. \"before a release\"."`
	Source       string   `json:"source,omitempty" jsonschema_description:"Where it came from."`
	Session      string   `json:"session,omitempty" jsonschema_description:"The conversation or run it belongs to."`
	Entities     []string `json:"entities,omitempty" jsonschema_description:"Names of the people, places, projects or tools it is about."`
	Significance int      `json:"significance,omitempty" jsonschema:"minimum=1,maximum=10" jsonschema_description:"1-10 (default 5); outcomes move it."`
}

// LessonsIn lists lessons.
type LessonsIn struct {
	Scope
	IncludeArchived bool `json:"include_archived,omitempty" jsonschema_description:"Also list lessons archived after failing repeatedly."`
}

// LessonsOut lists lessons, best score first.
type LessonsOut struct {
	Lessons []*core.Lesson `json:"lessons"`
}

// OutcomeIn records how following a lesson went.
type OutcomeIn struct {
	Scope
	ID      int64  `json:"id" jsonschema:"minimum=1" jsonschema_description:"The lesson."`
	Success *bool  `json:"success" jsonschema_description:"true when following it worked, false when it did not (required)."`
	Note    string `json:"note,omitempty" jsonschema_description:"What happened, recorded in the lesson's history."`
}

// ForgetSourceIn names a source to forget.
type ForgetSourceIn struct {
	Scope
	Source string `json:"source" jsonschema_description:"A source, matched exactly or as a prefix up to a separator (conversation:7 takes conversation:7#turn-3, not conversation:70)."`
	DryRun bool   `json:"dry_run,omitempty" jsonschema_description:"List what would be forgotten; forget nothing."`
	Strict bool   `json:"strict,omitempty" jsonschema_description:"Also forget memories derived from this source and from others."`
	Reason string `json:"reason,omitempty" jsonschema_description:"Why, recorded in every deletion certificate."`
}

// ListIn browses memories a page at a time.
type ListIn struct {
	Scope
	NamespaceOnly bool              `json:"namespace_only,omitempty" jsonschema_description:"List the namespace alone, without the shared default one."`
	Pools         []core.Pool       `json:"pools,omitempty" jsonschema_description:"Only these pools: raw, memory, knowledge (default: all)."`
	Types         []core.Type       `json:"types,omitempty" jsonschema_description:"Only these memory types (default: all)."`
	Statuses      []core.Status     `json:"statuses,omitempty" jsonschema_description:"Only these statuses: active, quarantined, archived (default: active only)."`
	Trust         []core.TrustLevel `json:"trust,omitempty" jsonschema_description:"Only these trust levels: certain, inferred, imported, contradicted (default: all)."`
	SourcePrefix  string            `json:"source_prefix,omitempty" jsonschema_description:"Only memories whose source starts with this, e.g. conversation:42."`
	Entity        string            `json:"entity,omitempty" jsonschema_description:"Only memories about this entity (case-insensitive)."`
	CreatedAfter  string            `json:"created_after,omitempty" jsonschema_description:"Only memories created (learned) after this time (RFC3339 or YYYY-MM-DD)."`
	CreatedBefore string            `json:"created_before,omitempty" jsonschema_description:"Only memories created before this time."`
	UpdatedAfter  string            `json:"updated_after,omitempty" jsonschema_description:"Only memories whose current version was written after this time."`
	UpdatedBefore string            `json:"updated_before,omitempty" jsonschema_description:"Only memories whose current version was written before this time."`
	ValidAfter    string            `json:"valid_after,omitempty" jsonschema_description:"Only memories still true after this time (valid_to unset or later)."`
	ValidBefore   string            `json:"valid_before,omitempty" jsonschema_description:"Only memories already true before this time (valid_from unset or earlier)."`
	Sort          string            `json:"sort,omitempty" jsonschema:"enum=recency,enum=significance" jsonschema_description:"recency (default: newest first) or significance (most significant first, then newest)."`
	Limit         int               `json:"limit,omitempty" jsonschema:"minimum=1,maximum=1000" jsonschema_description:"At most this many memories in the page (default 20)."`
	Cursor        string            `json:"cursor,omitempty" jsonschema_description:"The next_cursor of the previous page, to continue the listing."`
}

// Request is the engine's ListRequest for in.
func (in *ListIn) Request() (core.ListRequest, error) {
	req := core.ListRequest{NamespaceOnly: in.NamespaceOnly, Pools: in.Pools, Types: in.Types, Statuses: in.Statuses, TrustLevels: in.Trust,
		SourcePrefix: in.SourcePrefix, Entity: in.Entity, Sort: core.ListSort(in.Sort), Limit: in.Limit, Cursor: in.Cursor}
	var err error
	for _, f := range []struct {
		name string
		s    string
		dst  *time.Time
	}{
		{"created_after", in.CreatedAfter, &req.CreatedAfter}, {"created_before", in.CreatedBefore, &req.CreatedBefore},
		{"updated_after", in.UpdatedAfter, &req.UpdatedAfter}, {"updated_before", in.UpdatedBefore, &req.UpdatedBefore},
		{"valid_after", in.ValidAfter, &req.ValidAfter}, {"valid_before", in.ValidBefore, &req.ValidBefore},
	} {
		if *f.dst, err = ParseTime(f.name, f.s); err != nil {
			return req, err
		}
	}
	return req, nil
}

// TraceIn names a memory to trace.
type TraceIn struct {
	Scope
	ID       int64 `json:"id" jsonschema:"minimum=1" jsonschema_description:"The memory."`
	MaxDepth int   `json:"max_depth,omitempty" jsonschema:"minimum=1,maximum=100" jsonschema_description:"Follow at most this many steps each way (default 10)."`
	MaxNodes int   `json:"max_nodes,omitempty" jsonschema:"minimum=1,maximum=1000" jsonschema_description:"List at most this many memories in all (default 100)."`
}

// AuditIn filters the audit log.
type AuditIn struct {
	Scope
	MemoryID int64  `json:"memory_id,omitempty" jsonschema:"minimum=1" jsonschema_description:"Only entries about this memory."`
	Action   string `json:"action,omitempty" jsonschema_description:"Only this action (remember, update, forget, ...) or a prefix ending in a dot (quarantine.)."`
	Source   string `json:"source,omitempty" jsonschema_description:"Only entries that name this source."`
	Since    string `json:"since,omitempty" jsonschema_description:"Only entries at or after this time (RFC3339 or YYYY-MM-DD)."`
	Until    string `json:"until,omitempty" jsonschema_description:"Only entries before this time."`
	Last     int    `json:"last,omitempty" jsonschema:"minimum=1,maximum=1000" jsonschema_description:"Only the last N entries that match (still oldest first)."`
	Before   uint64 `json:"before,omitempty" jsonschema:"minimum=1" jsonschema_description:"Only entries whose seq is below this one: with last, the page before one whose first entry has this seq."`
}

// AuditOut lists audit entries, oldest first.
type AuditOut struct {
	Entries []core.AuditEntry `json:"entries"`
}

// AuditExportOut is the verified audit log as memos audit export writes it,
// byte for byte, so that memos audit verify FILE checks a saved answer.
type AuditExportOut struct {
	core.AuditExport
	raw []byte
}

// JSON returns the export's bytes (see Encode).
func (a *AuditExportOut) JSON() ([]byte, error) { return a.raw, nil }

// ExportIn selects what to export.
type ExportIn struct {
	Scope
	Namespaces []string `json:"namespaces,omitempty" jsonschema_description:"Export only these namespaces (default: the whole store); edges that lead outside are left out and counted."`
}

// ExportOut is an export carried in JSON (MCP, or an HTTP caller that asks
// for JSON): the JSONL text and what it holds. Over HTTP the export is
// normally the NDJSON answer itself.
type ExportOut struct {
	transfer.ExportReport
	JSONL string `json:"jsonl" jsonschema_description:"The export: a header line, one line per memory with every version, one line per edge (the format memos export writes and memos import jsonl reads)."`
}

// ImportIn is an export to bring in, all or nothing.
type ImportIn struct {
	Scope
	JSONL  string `json:"jsonl,omitempty" jsonschema_description:"A memos export (JSONL). Over HTTP it may instead be the request body itself, sent as application/x-ndjson, with dry_run in the URL query."`
	DryRun bool   `json:"dry_run,omitempty" jsonschema_description:"Check the export and report what would be imported; store nothing."`
	// Origin names the import in its audit entry (default "jsonl:api");
	// it is no field of a request, the CLI sets it to the file's name.
	Origin string `json:"-"`
}

// importJSONL reads and checks a whole export before anything is written,
// as memos import jsonl does, then imports it.
func importJSONL(ctx context.Context, e *core.Engine, in *ImportIn, r io.Reader) (*core.ImportReport, error) {
	_, req, err := transfer.ReadJSONL(r)
	if err != nil {
		return nil, fmt.Errorf("import jsonl: %w", err)
	}
	req.Origin, req.DryRun = "jsonl:api", in.DryRun
	if in.Origin != "" {
		req.Origin = in.Origin
	}
	return e.Import(ctx, *req)
}

// SetValidity sets memory id's event-time interval; a nil bound keeps the
// memory's current one. The CLI's set-validity calls it too.
func SetValidity(ctx context.Context, e *core.Engine, id int64, from, to *time.Time) (*core.Memory, error) {
	if from == nil && to == nil {
		return nil, core.Invalidf("give valid_from, valid_to or both")
	}
	if from == nil || to == nil {
		cur, err := e.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		if from == nil {
			from = &cur.ValidFrom
		}
		if to == nil {
			to = &cur.ValidTo
		}
	}
	return e.SetValidity(ctx, id, *from, *to)
}

func optTime(field string, s *string) (*time.Time, error) {
	if s == nil {
		return nil, nil
	}
	t, err := ParseTime(field, *s)
	return &t, err
}

// patch builds the engine's Patch from the fields given.
func (in *UpdateIn) patch() (core.Patch, error) {
	p := core.Patch{Content: in.Content, TrustScore: in.TrustScore, Entities: in.Entities,
		EmotionalContext: in.EmotionalContext, Source: in.Source, Session: in.Session, MergeMetadata: in.Metadata}
	if in.Type != "" {
		p.Type = &in.Type
	}
	if in.Pool != "" {
		p.Pool = &in.Pool
	}
	if in.Significance != nil {
		if n := *in.Significance; n < 1 || n > 10 {
			return p, SignificanceError(n)
		}
		p.Significance = in.Significance
	}
	if in.Status != "" {
		if err := checkStatus(in.Status); err != nil {
			return p, err
		}
		p.Status = &in.Status
	}
	if in.Trust != "" {
		p.TrustLevel = &in.Trust
	}
	var err error
	if p.ValidFrom, err = optTime("valid_from", in.ValidFrom); err != nil {
		return p, err
	}
	if p.ValidTo, err = optTime("valid_to", in.ValidTo); err != nil {
		return p, err
	}
	if reflect.ValueOf(p).IsZero() {
		return p, core.Invalidf("nothing to update: give new content or a field to change")
	}
	return p, nil
}

// Ops returns the table, in the order front-ends list it.
func Ops() []*Op { return table }

var table = []*Op{
	op(Op{Name: "remember", Tool: "memory_store", Title: "Store a memory",
		Description: "Store one thing worth remembering about the user, their work or the world: a fact, preference, event, relationship or lesson the user revealed, without being asked. " +
			"Call it whenever the conversation reveals something that should still be known in a later session. Give it as one self-contained statement and rate its significance 1-10 " +
			"(1-2 passing, 3-4 context, 5-6 important, 7-8 key personal information or decisions, 9-10 core identity). Returns the stored memory with its id."},
		func(ctx context.Context, e *core.Engine, in *RememberIn) (*core.Memory, error) {
			i, err := in.input(in.Content)
			if err != nil {
				return nil, err
			}
			in.Provenance.apply(&i)
			return e.Remember(ctx, i)
		}),
	op(Op{Name: "remember-batch", Tool: "memos_remember_batch", Title: "Store several memories",
		Description: "Store several memories at once, all or none (e.g. the facts distilled from a whole conversation, or the chunks of a document). Same fields as memory_store per memory."},
		func(ctx context.Context, e *core.Engine, in *RememberBatchIn) (*MemoriesOut, error) {
			ins := make([]core.Input, len(in.Memories))
			for i := range in.Memories {
				var err error
				if ins[i], err = in.Memories[i].input(in.Memories[i].Content); err != nil {
					return nil, err
				}
				in.Memories[i].Provenance.apply(&ins[i])
			}
			ms, err := e.RememberBatch(ctx, ins)
			if err != nil {
				return nil, err
			}
			return &MemoriesOut{Memories: ms}, nil
		}),
	op(Op{Name: "capture", Tool: "memos_capture", Title: "Capture a conversation",
		Description: "Store the turns of a conversation verbatim (raw pool) and the facts, preferences, events and relationships the server's extractor finds in them, linked to the turns they came from. " +
			"Call it with the latest turns at the end of an exchange, with a stable session name; turns already captured are not stored twice. " +
			"Use memory_store instead for a single fact you have already distilled."},
		func(ctx context.Context, e *core.Engine, in *CaptureIn) (*core.CaptureResult, error) {
			req := core.CaptureRequest{Session: in.Session, NoExtract: in.NoExtract, Turns: make([]core.Turn, len(in.Turns))}
			for i, t := range in.Turns {
				at, err := ParseTime(fmt.Sprintf("turns[%d].time", i), t.Time)
				if err != nil {
					return nil, err
				}
				req.Turns[i] = core.Turn{Speaker: t.Speaker, Text: t.Text, Time: at}
			}
			return e.Capture(ctx, req)
		}),
	op(Op{Name: "search", Tool: "memos_search", Title: "Search memories", ReadOnly: true,
		Description: "Find stored memories relevant to a question, ranked best first, each with its id, content and score. Use it to look something up about the user or a past conversation; " +
			"to put memories into your prompt prefer memos_context_pack, which fits them to a token budget with citations. " +
			"valid_at asks what was true at a time, as_of what was believed then; reference_time is when the question was asked (default now), which time words such as \"last weekend\" are read against."},
		func(ctx context.Context, e *core.Engine, in *SearchIn) (*core.SearchResult, error) {
			req, err := in.request()
			if err != nil {
				return nil, err
			}
			return e.Search(ctx, req)
		}),
	op(Op{Name: "context-pack", Tool: "memos_context_pack", Title: "Build a context pack", ReadOnly: true,
		Description: "Recall what matters for the task at hand: the memories relevant to a query, with citations (id, version, source, times, trust), graph neighbours and the lessons that apply, " +
			"fitted to a token budget. Call it before answering a question that may depend on what you learned earlier, and inject the result into your context. " +
			"With bootstrap=true (no query) it returns the most significant memories, for the start of a session."},
		func(ctx context.Context, e *core.Engine, in *PackIn) (*core.Pack, error) {
			req, err := in.Request()
			if err != nil {
				return nil, err
			}
			return e.ContextPack(ctx, req)
		}),
	op(Op{Name: "explain", Tool: "memos_explain", Title: "Explain a search", ReadOnly: true,
		Description: "Show how a search ranked every candidate (keyword and vector ranks, fused score, weights, relevance gate, expansion) — for debugging why a memory was or was not recalled."},
		func(ctx context.Context, e *core.Engine, in *SearchIn) (*ExplainOut, error) {
			req, err := in.request()
			if err != nil {
				return nil, err
			}
			x, err := e.Explain(ctx, req)
			if err != nil {
				return nil, err
			}
			return NewExplainOut(x), nil
		}),
	op(Op{Name: "get", Tool: "memos_get", Title: "Get a memory", ReadOnly: true,
		Description: "Fetch one memory by id (or one of its older versions), e.g. to read the full content of a memory a context pack cited."},
		func(ctx context.Context, e *core.Engine, in *IDIn) (*core.Memory, error) {
			return e.GetVersion(ctx, in.ID, in.Version)
		}),
	op(Op{Name: "update", Tool: "memos_update", Title: "Update a memory",
		Description: "Correct or refine a memory: writes a new version with the fields given changed (the old version stays in its history). " +
			"A text field given as \"\" is cleared (valid_to \"\": still true); metadata changes key by key, null removes a key. " +
			"To record that something stopped being true and something else is true now, use memos_supersede instead."},
		func(ctx context.Context, e *core.Engine, in *UpdateIn) (*core.Memory, error) {
			p, err := in.patch()
			if err != nil {
				return nil, err
			}
			return e.Update(ctx, in.ID, p)
		}),
	op(Op{Name: "history", Tool: "memos_history", Title: "List a memory's versions", ReadOnly: true,
		Description: "List every version of a memory, oldest first: how it changed over time."},
		func(ctx context.Context, e *core.Engine, in *HistoryIn) (*VersionsOut, error) {
			hs, err := e.History(ctx, in.ID)
			if err != nil {
				return nil, err
			}
			return &VersionsOut{ID: in.ID, Versions: hs}, nil
		}),
	op(Op{Name: "revert", Tool: "memos_revert", Title: "Revert a memory",
		Description: "Undo a change: write a new version of a memory equal to one of its older versions."},
		func(ctx context.Context, e *core.Engine, in *RevertIn) (*core.Memory, error) {
			return e.Revert(ctx, in.ID, in.Version)
		}),
	op(Op{Name: "set-validity", Tool: "memos_set_validity", Title: "Set when a memory was true", Renamed: map[string]string{"from": "valid_from", "to": "valid_to"},
		Description: "Record when what a memory says was true (event time), e.g. the user lived in Paris from 2019 to 2023: valid_from and valid_to as RFC3339 times or dates. " +
			"Searches then find it only for that period (valid_at). Writes a new version."},
		func(ctx context.Context, e *core.Engine, in *SetValidityIn) (*core.Memory, error) {
			from, err := optTime("valid_from", in.ValidFrom)
			if err != nil {
				return nil, err
			}
			to, err := optTime("valid_to", in.ValidTo)
			if err != nil {
				return nil, err
			}
			return SetValidity(ctx, e, in.ID, from, to)
		}),
	op(Op{Name: "supersede", Tool: "memos_supersede", Title: "Supersede a memory",
		Description: "Record that a memory is no longer true and what is true instead (e.g. the user moved from Paris to Lisbon): stores the new memory, ends the old one's validity and links them. " +
			"Searches now find the new one; searches about the past still find the old one. Attributes not given are taken from the old memory, but for source and entities: the new memory has only those given."},
		func(ctx context.Context, e *core.Engine, in *SupersedeIn) (*core.Memory, error) {
			i, err := in.input(in.Content)
			if err != nil {
				return nil, err
			}
			return e.Supersede(ctx, in.ID, i)
		}),
	op(Op{Name: "link", Tool: "memos_link", Title: "Link two memories",
		Description: "Relate two memories with a typed edge (relates_to, supports, contradicts, derived_from, temporal_precedes): linked memories are recalled together."},
		func(ctx context.Context, e *core.Engine, in *LinkIn) (*core.Edge, error) {
			ed := core.Edge{From: in.From, To: in.To, Type: core.EdgeType(in.Type), Source: in.Source}
			if in.Weight != nil {
				if *in.Weight <= 0 {
					return nil, core.Invalidf("edge weight %v must be a positive number", *in.Weight)
				}
				ed.Weight = *in.Weight
			}
			return e.Link(ctx, ed)
		}),
	op(Op{Name: "unlink", Tool: "memos_unlink", Title: "Remove an edge",
		Description: "Remove a typed edge between two memories."},
		func(ctx context.Context, e *core.Engine, in *UnlinkIn) (*UnlinkOut, error) {
			t := core.EdgeType(in.Type)
			if t == "" {
				t = core.EdgeRelatesTo
			}
			if err := e.Unlink(ctx, in.From, in.To, t); err != nil {
				return nil, err
			}
			return &UnlinkOut{From: in.From, To: in.To, Type: string(t), Removed: true}, nil
		}),
	op(Op{Name: "edges", Tool: "memos_edges", Title: "List a memory's edges", ReadOnly: true,
		Description: "List the edges that start or end at a memory: what supports, contradicts or relates to it."},
		func(ctx context.Context, e *core.Engine, in *HistoryIn) (*EdgesOut, error) {
			es, err := e.Edges(ctx, in.ID)
			if err != nil {
				return nil, err
			}
			if es == nil {
				es = []core.Edge{}
			}
			return &EdgesOut{ID: in.ID, Edges: es}, nil
		}),
	op(Op{Name: "forget", Tool: "memos_forget", Title: "Forget a memory", Destructive: true,
		Description: "Erase a memory for good when the user asks you to forget something or it must not be kept: every version, index entry, vector and edge is removed. " +
			"Returns a deletion certificate (SHA-256 of the content, audit entry). Cannot be undone; to correct a memory use memos_update or memos_supersede."},
		func(ctx context.Context, e *core.Engine, in *ForgetIn) (*core.DeletionCertificate, error) {
			return e.Forget(ctx, in.ID, in.Reason)
		}),
	op(Op{Name: "consolidate", Tool: "memos_consolidate", Title: "Consolidate memories",
		Description: "Tidy the namespace's memories: merge duplicates (the survivor keeps their entities and sources), archive stale low-significance ones and, with pages=true, distil clusters into knowledge pages. " +
			"Never deletes history. Run it occasionally (e.g. at the end of a long session), with dry_run=true first to see what would change."},
		func(ctx context.Context, e *core.Engine, in *ConsolidateIn) (*ConsolidateOut, error) {
			rep, err := e.Consolidate(ctx, core.ConsolidateRequest{DryRun: in.DryRun, Pages: in.Pages})
			if err != nil {
				return nil, err
			}
			return &ConsolidateOut{ConsolidateReport: rep, Took: Duration(rep.Took), TookNS: int64(rep.Took)}, nil
		}),
	op(Op{Name: "stats", Tool: "memos_stats", Title: "Count memories", ReadOnly: true,
		Description: "Count the memories in the namespace (and default) by namespace, pool, type and status, with versions, edges and the embedder in use."},
		func(ctx context.Context, e *core.Engine, _ *Empty) (*core.Stats, error) {
			return e.Stats(ctx)
		}),
	op(Op{Name: "audit-verify", Tool: "memos_audit_verify", Title: "Verify the audit log", ReadOnly: true, Global: true,
		Description: "Check the tamper-evident audit log (provenance and deletions) of the whole store: recompute its hash chain and report how many entries it holds."},
		func(ctx context.Context, e *core.Engine, _ *Empty) (*core.AuditReport, error) {
			return e.VerifyAudit(ctx)
		}),
	op(Op{Name: "review", Tool: "memos_review", Title: "List the review queue", ReadOnly: true,
		Description: "List the memories waiting for a person's review (quarantined: low trust, an untrusted source, secret-looking, or contradicting a trusted memory), oldest first, each with why it is held and what it contradicts. " +
			"Quarantined memories never appear in search or packs until released. With limit, a page: pass its next as after for the next one."},
		func(ctx context.Context, e *core.Engine, in *ReviewIn) (*ReviewOut, error) {
			if in.Limit > 1000 {
				return nil, core.Invalidf("limit %d: list at most 1000 at a time", in.Limit)
			}
			p, err := e.ReviewPage(ctx, core.ReviewRequest{After: in.After, Limit: in.Limit})
			if err != nil {
				return nil, err
			}
			return &ReviewOut{Items: p.Items, Next: p.Next}, nil
		}),
	op(Op{Name: "quarantine-release", Tool: "memos_quarantine_release", Title: "Release a quarantined memory", Renamed: map[string]string{"trust_level": "trust"},
		Description: "Let a quarantined memory into recall after a person checked it (optionally with a new trust level). Only call this when the user approved it."},
		func(ctx context.Context, e *core.Engine, in *ReleaseIn) (*core.Memory, error) {
			return e.Release(ctx, in.ID, core.ReleaseOptions{TrustLevel: in.Trust, Note: in.Note})
		}),
	op(Op{Name: "quarantine-reject", Tool: "memos_quarantine_reject", Title: "Reject a quarantined memory", Destructive: true,
		Description: "Discard a quarantined memory a person rejected: it is forgotten, with a deletion certificate."},
		func(ctx context.Context, e *core.Engine, in *RejectIn) (*core.DeletionCertificate, error) {
			if strings.TrimSpace(in.Reason) == "" {
				return nil, core.Invalidf("quarantine-reject needs a reason: say why the memory is rejected (the deletion certificate and the audit log record it)")
			}
			return e.Reject(ctx, in.ID, in.Reason)
		}),
	op(Op{Name: "learn", Tool: "memos_learn", Title: "Learn a lesson",
		Description: "Store procedural guidance you or the user worked out (\"when X, do Y\"), so it shows up in context packs when the situation comes back. Report how it went later with memos_lesson_outcome."},
		func(ctx context.Context, e *core.Engine, in *LearnIn) (*core.Lesson, error) {
			if err := CheckSignificance(in.Significance); err != nil {
				return nil, err
			}
			return e.Learn(ctx, core.LessonInput{Guidance: in.Guidance, When: in.When, Source: in.Source,
				Session: in.Session, Entities: in.Entities, Significance: in.Significance})
		}),
	op(Op{Name: "lessons", Tool: "memos_lessons", Title: "List lessons", ReadOnly: true,
		Description: "List the lessons in the namespace, best first by their success/failure record."},
		func(ctx context.Context, e *core.Engine, in *LessonsIn) (*LessonsOut, error) {
			ls, err := e.Lessons(ctx, core.LessonFilter{IncludeArchived: in.IncludeArchived})
			return &LessonsOut{Lessons: ls}, err
		}),
	op(Op{Name: "lesson", Tool: "memos_lesson", Title: "Show a lesson", ReadOnly: true,
		Description: "Fetch one lesson by id with its outcome record (successes, failures, score) and the situation it applies to."},
		func(ctx context.Context, e *core.Engine, in *HistoryIn) (*core.Lesson, error) {
			return e.Lesson(ctx, in.ID)
		}),
	op(Op{Name: "lesson-outcome", Tool: "memos_lesson_outcome", Title: "Record a lesson's outcome",
		Description: "After following a lesson, record whether it worked: successes raise its score and rank, repeated failures demote and finally archive it."},
		func(ctx context.Context, e *core.Engine, in *OutcomeIn) (*core.Lesson, error) {
			if in.Success == nil {
				return nil, core.Invalidf("lesson-outcome needs success: true when following the lesson worked, false when it did not")
			}
			return e.LessonOutcome(ctx, in.ID, *in.Success, in.Note)
		}),
	op(Op{Name: "forget-source", Tool: "memos_forget_source", Title: "Forget everything from a source", Destructive: true,
		Description: "Erase every memory that came from a source (exact or prefix, e.g. a conversation), and what was derived from them, each with a deletion certificate. Use dry_run=true first. Cannot be undone."},
		func(ctx context.Context, e *core.Engine, in *ForgetSourceIn) (*core.ForgetSourceReport, error) {
			return e.ForgetSource(ctx, core.ForgetSourceRequest{Source: in.Source, DryRun: in.DryRun, Strict: in.Strict, Reason: in.Reason})
		}),
	op(Op{Name: "list", Tool: "memos_list", Title: "List memories", ReadOnly: true, Renamed: map[string]string{"pool": "pools", "type": "types", "status": "statuses"},
		Description: "Browse the stored memories without a query, newest first (sort=significance: most significant first), filtered by pool, type, status, trust, source prefix, entity and created, updated or valid times. " +
			"Returns a page; pass its next_cursor as cursor for the next one, until there is none. A page may hold fewer memories than limit, even none, and still have a next_cursor when the filters leave most memories out. " +
			"Quarantined and archived memories are listed only when statuses names them. To find memories about something, use memos_search."},
		func(ctx context.Context, e *core.Engine, in *ListIn) (*core.ListResult, error) {
			req, err := in.Request()
			if err != nil {
				return nil, err
			}
			return e.List(ctx, req)
		}),
	op(Op{Name: "trace", Tool: "memos_trace", Title: "Trace a memory's provenance", ReadOnly: true,
		Description: "Show where a memory came from and what came from it: its source, the memories it was derived from or replaced (transitively: the turns a fact was extracted from, the duplicates merged into it, the members of a knowledge page, the memory it superseded) " +
			"and the memories derived from it, each with id, version, type, source, an excerpt and its distance."},
		func(ctx context.Context, e *core.Engine, in *TraceIn) (*core.TraceResult, error) {
			return e.Trace(ctx, core.TraceRequest{ID: in.ID, MaxDepth: in.MaxDepth, MaxNodes: in.MaxNodes})
		}),
	op(Op{Name: "audit", Tool: "memos_audit", Title: "List the audit log", ReadOnly: true, Global: true,
		Description: "List the tamper-evident audit log of the whole store, oldest first, filtered by memory, action, source and time: who stored, changed, released or forgot what, with the detail of each change. " +
			"last=N lists only the latest N; to page further back, pass the first entry's seq as before."},
		func(ctx context.Context, e *core.Engine, in *AuditIn) (*AuditOut, error) {
			if in.Last < 0 || in.Last > 1000 {
				return nil, core.Invalidf("last %d: give a number of entries from 1 to 1000", in.Last)
			}
			f := core.AuditFilter{MemoryID: in.MemoryID, Action: in.Action, Source: in.Source, Last: in.Last, Before: in.Before}
			var err error
			if f.Since, err = ParseTime("since", in.Since); err != nil {
				return nil, err
			}
			if f.Until, err = ParseTime("until", in.Until); err != nil {
				return nil, err
			}
			log, err := e.Audit(ctx, f)
			if log == nil {
				log = []core.AuditEntry{}
			}
			return &AuditOut{Entries: log}, err
		}),
	op(Op{Name: "audit-export", Tool: "memos_audit_export", Title: "Export the audit log", ReadOnly: true, Global: true,
		Description: "Verify the audit log of the whole store and return it as a self-checking document (format memos-audit/1, with its head and a digest of its entries) to keep elsewhere; memos audit verify FILE checks a saved copy with no store. A log that does not verify is not exported."},
		func(ctx context.Context, e *core.Engine, _ *Empty) (*AuditExportOut, error) {
			var b bytes.Buffer
			if _, err := e.ExportAudit(ctx, &b); err != nil {
				return nil, err
			}
			out := &AuditExportOut{raw: b.Bytes()}
			if err := json.Unmarshal(b.Bytes(), &out.AuditExport); err != nil {
				return nil, fmt.Errorf("audit export: %w", err)
			}
			return out, nil
		}),
	op(Op{Name: "export", Tool: "memos_export", Title: "Export memories", ReadOnly: true, Global: true,
		Description: "Export the store (or some namespaces) as JSONL: every memory with every version, and the edges between them — a backup that memos_import or memos import jsonl restores into any store. Over HTTP the answer is the JSONL itself (application/x-ndjson).",
		Stream: &Stream{Write: func(ctx context.Context, e *core.Engine, in any, w io.Writer) (any, error) {
			return exportJSONL(ctx, e, in.(*ExportIn), w)
		}}},
		func(ctx context.Context, e *core.Engine, in *ExportIn) (*ExportOut, error) {
			var b strings.Builder
			rep, err := exportJSONL(ctx, e, in, &b)
			if err != nil {
				return nil, err
			}
			return &ExportOut{ExportReport: *rep, JSONL: b.String()}, nil
		}),
	op(Op{Name: "import", Tool: "memos_import", Title: "Import memories", Global: true,
		Description: "Bring in a memos export (JSONL), all or nothing: the whole export is read and checked before anything is stored, then every version, edge, validity and trust is restored under new ids. Memories already in the store are skipped, so an import can be run again. Use dry_run=true first.",
		Stream: &Stream{Read: func(ctx context.Context, e *core.Engine, in any, r io.Reader) (any, error) {
			return importJSONL(ctx, e, in.(*ImportIn), r)
		}}},
		func(ctx context.Context, e *core.Engine, in *ImportIn) (*core.ImportReport, error) {
			if strings.TrimSpace(in.JSONL) == "" {
				return nil, core.Invalidf("import: jsonl is empty: give the text of a memos export")
			}
			return importJSONL(ctx, e, in, strings.NewReader(in.JSONL))
		}),
}

// exportJSONL writes the export in selects to w.
func exportJSONL(ctx context.Context, e *core.Engine, in *ExportIn, w io.Writer) (*transfer.ExportReport, error) {
	return transfer.Export(ctx, e, w, core.ExportOptions{Namespaces: in.Namespaces})
}

// ConsolidateOut is consolidate's answer: core's report with the time the
// pass took written as the configuration writes durations ("1.5s").
type ConsolidateOut struct {
	*core.ConsolidateReport
	Took Duration `json:"took" jsonschema_description:"How long the pass took, e.g. 1.5s."`
	// TookNS is took's old form, answered for one more release.
	TookNS int64 `json:"took_ns" jsonschema_description:"Deprecated (goes away in the next release): took in nanoseconds."`
}

// ExplainOut is explain's answer: core's Explanation with the durations of
// its search configuration written as the configuration file writes them
// ("720h", "2s"), not as nanoseconds.
type ExplainOut struct {
	*core.Explanation
	Config core.SearchSettings `json:"config" jsonschema_description:"The weights and thresholds in force, named and written as in the configuration file (search.*)."`
}

// NewExplainOut wraps x as explain answers it.
func NewExplainOut(x *core.Explanation) *ExplainOut {
	return &ExplainOut{Explanation: x, Config: core.NewSearchSettings(x.Config)}
}

// Duration is core.Duration: a time.Duration that JSON writes as a string
// in the syntax the configuration takes ("720h", "1m30s", "250ms").
type Duration = core.Duration

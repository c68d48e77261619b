package govern

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/memos-go/memos/core/driver"
)

// This file is the audit chain: every write the engine makes appends an
// entry, chained by hash to the one before it. An entry that concerns a
// memory version binds that version: its Detail holds "version" and
// "sha256", the VersionHash of the version as written, so that editing a
// stored memory or version row — not only the audit table — is detected by
// Verify.
//
// Actions: remember (provenance: namespace, source_sha256, status,
// derived_from, quarantine reasons), update, revert, set validity,
// supersede, reembed, status (the versions they wrote, with the fields that
// changed: validity and status with their old and new values), link and
// unlink (edges, among them derived_from provenance), quarantine.release,
// quarantine.reject and forget (deletion certificates), lesson.outcome,
// embedder.switch (model switches).

// Meta keys of the audit chain in the store.
const (
	MetaHead = "audit.head"
	// MetaSince is when the engine began binding every version it writes
	// to an audit entry; versions written before (by an older memos) are
	// not required to be bound.
	MetaSince = "audit.provenance_since"
)

// VersionHash is the SHA-256 an audit entry binds for a memory version: over
// the version's JSON encoding without its access statistics (which change on
// every read and write no version) and the bits of its embedding vector.
// The encoding is canonical, the form every backend reads back: a trust
// score of -0 counts as 0 (SQLite stores both as 0), and metadata is taken
// as it reads back from JSON (numbers as float64, objects with sorted keys,
// -0 as 0), so that a value given in another form does not make the stored
// version look altered.
func VersionHash(m *driver.Memory) string {
	c := *m
	c.Trust.Score = CanonicalFloat(c.Trust.Score)
	if c.Metadata != nil {
		md, err := canonicalMetadata(c.Metadata)
		if err != nil {
			// Metadata was checked to be JSON-encodable on write; a version
			// that no longer encodes cannot match any recorded hash.
			return "unencodable: " + err.Error()
		}
		c.Metadata = md
	}
	return hashVersion(&c, m.Embedding.Vector)
}

// legacyVersionHashes are the hashes memos bound before VersionHash was
// canonical: over the version as given, trust score -0 included. A store
// written then verifies against them; each is of a version equal to the
// stored one, in another encoding.
func legacyVersionHashes(m *driver.Memory) []string {
	hs := []string{hashVersion(m, m.Embedding.Vector)}
	if m.Trust.Score == 0 {
		c := *m
		c.Trust.Score = math.Copysign(0, -1)
		hs = append(hs, hashVersion(&c, m.Embedding.Vector))
	}
	return hs
}

// hashVersion hashes m's JSON encoding, access statistics and vector aside,
// and then the bits of vec.
func hashVersion(m *driver.Memory, vec []float32) string {
	c := *m
	c.LastAccessedAt, c.AccessCount = time.Time{}, 0
	c.Embedding.Vector = nil
	b, err := json.Marshal(&c)
	if err != nil {
		return "unencodable: " + err.Error()
	}
	h := sha256.New()
	h.Write(b)
	var buf [4]byte
	for _, x := range vec {
		binary.LittleEndian.PutUint32(buf[:], math.Float32bits(x))
		h.Write(buf[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// CanonicalFloat maps -0 to 0; every other value is its own canonical form
// (NaN and infinities are refused on write).
func CanonicalFloat(f float64) float64 {
	if f == 0 {
		return 0
	}
	return f
}

// canonicalMetadata returns md as a backend reads it back: decoded from its
// JSON encoding, with -0 as 0.
func canonicalMetadata(md map[string]any) (map[string]any, error) {
	b, err := json.Marshal(md)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case float64:
			return CanonicalFloat(x)
		case map[string]any:
			for k, e := range x {
				x[k] = walk(e)
			}
		case []any:
			for i, e := range x {
				x[i] = walk(e)
			}
		}
		return v
	}
	walk(out)
	return out, nil
}

// SourceHash is what the audit log keeps of a source: its SHA-256, so that a
// source's name does not outlive forget-source in the log, while a holder of
// the name can still find its entries.
func SourceHash(s string) string {
	if s == "" {
		return ""
	}
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// AuditHash is the chained hash of an audit entry: SHA-256 over the previous
// hash and the entry's fields. Verifiers recompute it for every entry.
func AuditHash(a *driver.AuditEntry) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s\n%d\n%s", a.PrevHash, a.Time.UTC().Format(time.RFC3339Nano), a.Action, a.MemoryID, a.Detail)
	return hex.EncodeToString(h.Sum(nil))
}

// Auditor appends the audit entries of one transaction, keeping the chain's
// head in memory and writing it to the store once, in Close. With Batch set,
// the versions passed to Stage are bound by one entry written in Close
// (detail {"memories": [{id, version, sha256, …}, …]}) instead of one entry
// each: a batch of 500 memories costs one audit row, not 500.
type Auditor struct {
	// Batch binds staged versions in one entry (see Auditor).
	Batch bool

	tx     driver.Tx
	clock  func() time.Time
	head   string
	loaded bool
	dirty  bool
	staged map[string][]map[string]any // action → bindings waiting for Close
	order  []string
	now    time.Time // one time for every entry of the transaction
}

// NewAuditor returns an auditor for tx; clock gives the entries' time when
// the operation set none (see At).
func NewAuditor(tx driver.Tx, clock func() time.Time) *Auditor {
	return &Auditor{tx: tx, clock: clock}
}

// At sets the time of the transaction's entries to t, a clock reading the
// operation already took (so that auditing takes none of its own), unless
// one is set.
func (a *Auditor) At(t time.Time) {
	if a.now.IsZero() {
		a.now = t
	}
}

// Stage binds version m under action: at once, or in Close when batching.
func (a *Auditor) Stage(action string, m *driver.Memory, detail map[string]any) error {
	a.At(m.UpdatedAt)
	if !a.Batch {
		_, err := a.Bind(action, m, detail)
		return err
	}
	d := maps.Clone(detail)
	if d == nil {
		d = map[string]any{}
	}
	d["id"], d["version"], d["sha256"] = m.ID, m.Version, VersionHash(m)
	if a.staged == nil {
		a.staged = map[string][]map[string]any{}
	}
	if _, ok := a.staged[action]; !ok {
		a.order = append(a.order, action)
	}
	a.staged[action] = append(a.staged[action], d)
	return nil
}

func (a *Auditor) load() error {
	if a.loaded {
		return nil
	}
	head, err := a.tx.Meta(MetaHead)
	if err != nil && !errors.Is(err, driver.ErrNotFound) {
		return err
	}
	a.head, a.loaded = head, true
	if a.now.IsZero() {
		a.now = a.clock()
	}
	if _, err := a.tx.Meta(MetaSince); errors.Is(err, driver.ErrNotFound) {
		return a.tx.SetMeta(MetaSince, a.now.Format(time.RFC3339Nano))
	} else if err != nil {
		return err
	}
	return nil
}

// Add appends an entry for memory id (0: none) with detail as its JSON.
func (a *Auditor) Add(action string, id int64, detail map[string]any) (*driver.AuditEntry, error) {
	if err := a.load(); err != nil {
		return nil, err
	}
	d := ""
	if len(detail) > 0 {
		b, err := json.Marshal(detail)
		if err != nil {
			return nil, fmt.Errorf("audit %s: %w", action, err)
		}
		d = string(b)
	}
	entry := &driver.AuditEntry{Time: a.now, Action: action, MemoryID: id, Detail: d, PrevHash: a.head}
	entry.Hash = AuditHash(entry)
	if err := a.tx.AppendAudit(entry); err != nil {
		return nil, err
	}
	a.head, a.dirty = entry.Hash, true
	return entry, nil
}

// Bind appends an entry that binds version m.
func (a *Auditor) Bind(action string, m *driver.Memory, detail map[string]any) (*driver.AuditEntry, error) {
	a.At(m.UpdatedAt)
	d := maps.Clone(detail)
	if d == nil {
		d = map[string]any{}
	}
	d["version"], d["sha256"] = m.Version, VersionHash(m)
	return a.Add(action, m.ID, d)
}

// Close writes the staged batch entries and records the chain's new head;
// call it before the transaction commits.
func (a *Auditor) Close() error {
	for _, action := range a.order {
		if _, err := a.Add(action, 0, map[string]any{"memories": a.staged[action]}); err != nil {
			return err
		}
	}
	a.staged, a.order = nil, nil
	if !a.dirty {
		return nil
	}
	a.dirty = false
	return a.tx.SetMeta(MetaHead, a.head)
}

// Append appends one entry in its own auditor; detail is "" or a JSON
// object.
func Append(tx driver.Tx, clock func() time.Time, action string, id int64, detail string) (*driver.AuditEntry, error) {
	var d map[string]any
	if detail != "" {
		if err := json.Unmarshal([]byte(detail), &d); err != nil {
			return nil, fmt.Errorf("audit %s: detail is not a JSON object: %w", action, err)
		}
	}
	a := NewAuditor(tx, clock)
	entry, err := a.Add(action, id, d)
	if err != nil {
		return nil, err
	}
	return entry, a.Close()
}

// Changes describes what next changes compared with cur, for the audit
// entry of a new version: the names of the fields that changed, and the
// old and new values of validity, status and trust.
func Changes(cur, next *driver.Memory) map[string]any {
	d := map[string]any{}
	var fields []string
	add := func(name string, changed bool) {
		if changed {
			fields = append(fields, name)
		}
	}
	add("content", cur.Content != next.Content)
	add("type", cur.Type != next.Type)
	add("pool", cur.Pool != next.Pool)
	add("significance", cur.Significance != next.Significance)
	add("entities", !slices.Equal(cur.Entities, next.Entities))
	add("emotional_context", cur.EmotionalContext != next.EmotionalContext)
	add("source", cur.Source != next.Source)
	add("session", cur.Session != next.Session)
	add("embedding", cur.Embedding.Model != next.Embedding.Model || !slices.Equal(cur.Embedding.Vector, next.Embedding.Vector))
	mj, _ := json.Marshal(cur.Metadata)
	nj, _ := json.Marshal(next.Metadata)
	add("metadata", string(mj) != string(nj))
	if cur.Trust != next.Trust {
		fields = append(fields, "trust")
		d["trust"] = map[string]any{"from": cur.Trust, "to": next.Trust}
	}
	if !cur.ValidFrom.Equal(next.ValidFrom) || !cur.ValidTo.Equal(next.ValidTo) {
		fields = append(fields, "validity")
		d["validity"] = map[string]any{"from": interval(cur), "to": interval(next)}
	}
	if cur.Status != next.Status {
		fields = append(fields, "status")
		d["status"] = map[string]any{"from": cur.Status, "to": next.Status}
	}
	if cur.Source != next.Source {
		d["source_sha256"] = SourceHash(next.Source)
	}
	d["changed"] = fields
	return d
}

// interval writes m's validity for an audit entry, as the engine's explain
// text does: "2024-01-02T00:00:00Z – open".
func interval(m *driver.Memory) string {
	from, to := "always", "open"
	if !m.ValidFrom.IsZero() {
		from = m.ValidFrom.Format(time.RFC3339)
	}
	if !m.ValidTo.IsZero() {
		to = m.ValidTo.Format(time.RFC3339)
	}
	return from + " – " + to
}

package core

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
)

// This file is the audit chain: every write the engine makes appends an
// entry, chained by hash to the one before it. An entry that concerns a
// memory version binds that version: its Detail holds "version" and
// "sha256", the VersionHash of the version as written, so that editing a
// stored memory or version row — not only the audit table — is detected by
// VerifyAudit.
//
// Actions: remember (provenance: namespace, source_sha256, status,
// derived_from, quarantine reasons), update, revert, set validity,
// supersede, reembed, status (the versions they wrote, with the fields that
// changed: validity and status with their old and new values), link and
// unlink (edges, among them derived_from provenance), quarantine.release,
// quarantine.reject and forget (deletion certificates), lesson.outcome,
// embedder.switch (model switches).

// VersionHash is the SHA-256 an audit entry binds for a memory version: over
// the version's JSON encoding without its access statistics (which change on
// every read and write no version) and the bits of its embedding vector.
// The encoding is canonical, the form every backend reads back: a trust
// score of -0 counts as 0 (SQLite stores both as 0), and metadata is taken
// as it reads back from JSON (numbers as float64, objects with sorted keys,
// -0 as 0), so that a value given in another form does not make the stored
// version look altered.
func VersionHash(m *Memory) string {
	c := *m
	c.Trust.Score = canonicalFloat(c.Trust.Score)
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
func legacyVersionHashes(m *Memory) []string {
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
func hashVersion(m *Memory, vec []float32) string {
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

// canonicalFloat maps -0 to 0; every other value is its own canonical form
// (NaN and infinities are refused on write).
func canonicalFloat(f float64) float64 {
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
			return canonicalFloat(x)
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

// sourceHash is what the audit log keeps of a source: its SHA-256, so that a
// source's name does not outlive forget-source in the log, while a holder of
// the name can still find its entries.
func sourceHash(s string) string {
	if s == "" {
		return ""
	}
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// auditor appends the audit entries of one transaction, keeping the chain's
// head in memory and writing it to the store once, in close. With batch set,
// the versions passed to stage are bound by one entry written in close
// (detail {"memories": [{id, version, sha256, …}, …]}) instead of one entry
// each: a batch of 500 memories costs one audit row, not 500.
type auditor struct {
	s      *shared
	tx     Tx
	head   string
	loaded bool
	dirty  bool
	batch  bool
	staged map[string][]map[string]any // action → bindings waiting for close
	order  []string
	now    time.Time // one time for every entry of the transaction
}

// at sets the time of the transaction's entries to t, a clock reading the
// operation already took (so that auditing takes none of its own), unless
// one is set.
func (a *auditor) at(t time.Time) {
	if a.now.IsZero() {
		a.now = t
	}
}

// stage binds version m under action: at once, or in close when batching.
func (a *auditor) stage(action string, m *Memory, detail map[string]any) error {
	a.at(m.UpdatedAt)
	if !a.batch {
		_, err := a.bind(action, m, detail)
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

func (s *shared) auditor(tx Tx) *auditor { return &auditor{s: s, tx: tx} }

func (a *auditor) load() error {
	if a.loaded {
		return nil
	}
	head, err := a.tx.Meta(metaAuditHead)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return err
	}
	a.head, a.loaded = head, true
	if a.now.IsZero() {
		a.now = a.s.clock()
	}
	if _, err := a.tx.Meta(metaAuditSince); errors.Is(err, ErrNotFound) {
		return a.tx.SetMeta(metaAuditSince, a.now.Format(time.RFC3339Nano))
	} else if err != nil {
		return err
	}
	return nil
}

// add appends an entry for memory id (0: none) with detail as its JSON.
func (a *auditor) add(action string, id int64, detail map[string]any) (*AuditEntry, error) {
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
	entry := &AuditEntry{Time: a.now, Action: action, MemoryID: id, Detail: d, PrevHash: a.head}
	entry.Hash = AuditHash(entry)
	if err := a.tx.AppendAudit(entry); err != nil {
		return nil, err
	}
	a.head, a.dirty = entry.Hash, true
	return entry, nil
}

// bind appends an entry that binds version m.
func (a *auditor) bind(action string, m *Memory, detail map[string]any) (*AuditEntry, error) {
	a.at(m.UpdatedAt)
	d := maps.Clone(detail)
	if d == nil {
		d = map[string]any{}
	}
	d["version"], d["sha256"] = m.Version, VersionHash(m)
	return a.add(action, m.ID, d)
}

// close writes the staged batch entries and records the chain's new head;
// call it before the transaction commits.
func (a *auditor) close() error {
	for _, action := range a.order {
		if _, err := a.add(action, 0, map[string]any{"memories": a.staged[action]}); err != nil {
			return err
		}
	}
	a.staged, a.order = nil, nil
	if !a.dirty {
		return nil
	}
	a.dirty = false
	return a.tx.SetMeta(metaAuditHead, a.head)
}

// appendAudit appends one entry in its own auditor.
func (s *shared) appendAudit(tx Tx, action string, id int64, detail string) (*AuditEntry, error) {
	var d map[string]any
	if detail != "" {
		if err := json.Unmarshal([]byte(detail), &d); err != nil {
			return nil, fmt.Errorf("audit %s: detail is not a JSON object: %w", action, err)
		}
	}
	a := s.auditor(tx)
	entry, err := a.add(action, id, d)
	if err != nil {
		return nil, err
	}
	return entry, a.close()
}

// AuditHash is the chained hash of an audit entry: SHA-256 over the previous
// hash and the entry's fields. Verifiers recompute it for every entry.
func AuditHash(a *AuditEntry) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s\n%d\n%s", a.PrevHash, a.Time.UTC().Format(time.RFC3339Nano), a.Action, a.MemoryID, a.Detail)
	return hex.EncodeToString(h.Sum(nil))
}

// AuditFilter selects audit entries; zero fields select everything.
type AuditFilter struct {
	MemoryID int64 `json:"memory_id,omitempty"`
	// Action is an action, or a family ending in "." ("quarantine." selects
	// quarantine, quarantine.release and quarantine.reject).
	Action string `json:"action,omitempty"`
	// Source selects the entries that name this source (by its SHA-256).
	Source string    `json:"source,omitempty"`
	Since  time.Time `json:"since,omitzero"`
	Until  time.Time `json:"until,omitzero"`
}

func (f *AuditFilter) match(a *AuditEntry, srcHash string) bool {
	switch {
	case f.MemoryID != 0 && a.MemoryID != f.MemoryID && !bindsMemory(a, f.MemoryID):
		return false
	case f.Action != "" && a.Action != f.Action && !(strings.HasSuffix(f.Action, ".") &&
		(strings.HasPrefix(a.Action, f.Action) || a.Action == strings.TrimSuffix(f.Action, "."))):
		return false
	case !f.Since.IsZero() && a.Time.Before(f.Since):
		return false
	case !f.Until.IsZero() && !a.Time.Before(f.Until):
		return false
	case srcHash != "" && !strings.Contains(a.Detail, srcHash):
		return false
	}
	return true
}

// Audit returns the audit log entries that match f, oldest first. The log
// is the store's, not a namespace's: it lists entries of every namespace.
// It needs a backend whose ReadTx implements AuditReader.
func (e *Engine) Audit(ctx context.Context, f AuditFilter) ([]AuditEntry, error) {
	const op = "audit"
	if err := e.checkOpen(op); err != nil {
		return nil, err
	}
	srcHash := sourceHash(f.Source)
	var out []AuditEntry
	err := e.b.View(ctx, func(tx ReadTx) error {
		return readAudit(tx, func(a AuditEntry) error {
			if f.match(&a, srcHash) {
				out = append(out, a)
			}
			return nil
		})
	})
	if err != nil {
		return nil, &Error{Op: op, Err: err}
	}
	return out, nil
}

func readAudit(tx ReadTx, fn func(AuditEntry) error) error {
	ar, ok := tx.(AuditReader)
	if !ok {
		return fmt.Errorf("%w: this backend cannot list its audit log", ErrInvalid)
	}
	return ar.Audit(fn)
}

// AuditReport is what VerifyAudit (or VerifyAuditExport) checked, and what
// it found wrong.
type AuditReport struct {
	Entries int    `json:"entries"`
	Head    string `json:"head"`
	// Memories and Versions count the stored memories and versions checked
	// against the entries that bind them (0 for an export); Namespaces
	// counts the stored memories of each namespace.
	Memories   int            `json:"memories"`
	Versions   int            `json:"versions"`
	Namespaces map[string]int `json:"namespaces,omitempty"`
	// Unbound counts versions written before the store began binding
	// versions to audit entries (by an older memos); they are not checked.
	Unbound int `json:"unbound,omitempty"`
	// BrokenEntry is the sequence number of the first entry that failed, 0
	// when no entry did (or nothing failed).
	BrokenEntry uint64 `json:"broken_entry,omitempty"`
	// Broken counts the problems found. Problems lists the first
	// MaxAuditProblems of them in the order found: the log's own entries
	// first, then the stored memories, then memories the log records that
	// the store lacks.
	Broken   int            `json:"broken,omitempty"`
	Problems []AuditProblem `json:"problems,omitempty"`
}

// MaxAuditProblems bounds AuditReport.Problems (and the error VerifyAudit
// returns); AuditReport.Broken counts the rest too.
const MaxAuditProblems = 100

// AuditProblem is one thing verification found wrong.
type AuditProblem struct {
	// Entry is the sequence number of the audit entry concerned, 0 if none.
	Entry uint64 `json:"entry,omitempty"`
	// MemoryID and Version name the memory (version) concerned, 0 if none.
	MemoryID int64 `json:"memory_id,omitempty"`
	Version  int   `json:"version,omitempty"`
	// Message says what is wrong and what it means.
	Message string `json:"message"`
}

// problem records p.
func (r *AuditReport) problem(p AuditProblem) {
	r.Broken++
	if p.Entry != 0 && (r.BrokenEntry == 0 || p.Entry < r.BrokenEntry) {
		r.BrokenEntry = p.Entry
	}
	if len(r.Problems) < MaxAuditProblems {
		r.Problems = append(r.Problems, p)
	}
}

// err is the error for the problems found (nil for none), wrapping
// ErrConflict: the one problem's message, or every problem listed, one per
// line, so that a later tamper is not hidden behind an earlier one.
func (r *AuditReport) err() error {
	switch r.Broken {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("%w: %s", ErrConflict, r.Problems[0].Message)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d problems", r.Broken)
	if r.Broken > len(r.Problems) {
		fmt.Fprintf(&b, " (the first %d listed)", len(r.Problems))
	}
	b.WriteByte(':')
	for _, p := range r.Problems {
		b.WriteString("\n  ")
		b.WriteString(p.Message)
	}
	return fmt.Errorf("%w: %s", ErrConflict, b.String())
}

// verifyChain checks sequence numbers, hashes and links of log, which must
// end at head, and records every broken entry in rep. An entry is checked
// against the entry before it as stored, so that one altered or removed
// entry is one problem, not one for every entry after it.
func verifyChain(log []AuditEntry, head string, rep *AuditReport) {
	rep.Entries = len(log)
	prev, prevSeq := "", uint64(0)
	for i := range log {
		a := &log[i]
		var why []string
		switch {
		case a.Seq == prevSeq+1:
		case i == 0:
			why = append(why, fmt.Sprintf("is the first in the log but carries sequence number %d: entries before it were removed or renumbered", a.Seq))
		default:
			why = append(why, fmt.Sprintf("follows entry %d: entries were removed, reordered or renumbered", prevSeq))
		}
		if a.PrevHash != prev {
			why = append(why, "does not chain to the entry before it")
		}
		if h := AuditHash(a); h != a.Hash {
			why = append(why, fmt.Sprintf("was altered (hash %s, recomputed %s)", a.Hash, h))
		}
		if len(why) > 0 {
			rep.problem(AuditProblem{Entry: a.Seq, MemoryID: a.MemoryID,
				Message: fmt.Sprintf("audit entry %d (%s) %s", a.Seq, a.Action, strings.Join(why, "; it "))})
		}
		prev, prevSeq = a.Hash, a.Seq
	}
	rep.Head = prev
	if head != prev {
		rep.problem(AuditProblem{Message: fmt.Sprintf("the log ends at hash %q but the head recorded is %q: entries were removed", prev, head)})
	}
}

// binding is the part of an entry's detail that binds a memory version:
// the entry's own memory's (version, sha256, and the namespace where the
// entry records it), or a batch's list.
type binding struct {
	Version   int    `json:"version"`
	SHA256    string `json:"sha256"`
	Namespace string `json:"namespace"`
	Memories  []struct {
		ID        int64  `json:"id"`
		Version   int    `json:"version"`
		SHA256    string `json:"sha256"`
		Namespace string `json:"namespace"`
	} `json:"memories"`
}

// bindsMemory reports whether batch entry a binds a version of memory id.
func bindsMemory(a *AuditEntry, id int64) bool {
	if a.MemoryID != 0 || !strings.Contains(a.Detail, `"memories":`) {
		return false
	}
	var b binding
	if json.Unmarshal([]byte(a.Detail), &b) != nil {
		return false
	}
	for _, m := range b.Memories {
		if m.ID == id {
			return true
		}
	}
	return false
}

// deletes reports whether a is the deletion certificate of its memory.
func deletes(a *AuditEntry) bool {
	return a.MemoryID != 0 && (a.Action == "forget" || a.Action == "quarantine.reject")
}

// VerifyAudit checks that the store has not been altered behind the
// engine's back. It checks the audit log's hash chain (every entry's hash,
// its link to the one before, contiguous sequence numbers, the head the
// store recorded); every stored memory version — the current row and every
// version row — against the entry that bound it when it was written; and
// that the store holds the memories the log says exist, and only those:
//   - a memory some entry binds a version of, and no deletion certificate
//     (forget, quarantine.reject) names, must be in the store;
//   - a memory a deletion certificate names must not be;
//   - a memory in the store must be bound by an entry, unless it was
//     written before the store kept provenance (by an older memos): its
//     versions predate the store's first audit entry and its id is below
//     every id whose creation the log records. Such versions are counted
//     as unbound.
//
// It reports every problem it finds (the first MaxAuditProblems in full):
// the error, wrapping ErrConflict, lists them, and so does the report,
// which also says what was checked.
func (e *Engine) VerifyAudit(ctx context.Context) (*AuditReport, error) {
	const op = "audit verify"
	if err := e.checkOpen(op); err != nil {
		return nil, err
	}
	rep := &AuditReport{}
	err := e.b.View(ctx, func(tx ReadTx) error {
		*rep = AuditReport{}
		var log []AuditEntry
		if err := readAudit(tx, func(a AuditEntry) error {
			log = append(log, a)
			return nil
		}); err != nil {
			return err
		}
		head, err := tx.Meta(metaAuditHead)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return err
		}
		verifyChain(log, head, rep)
		return verifyStore(ctx, tx, log, rep)
	})
	if err != nil {
		return rep, &Error{Op: op, Err: err}
	}
	if err := rep.err(); err != nil {
		return rep, &Error{Op: op, Err: err}
	}
	return rep, nil
}

type versionKey struct {
	id int64
	v  int
}

// logged is what the audit log says of one memory.
type logged struct {
	bound     *AuditEntry // the first entry that binds a version of it
	namespace string      // its namespace, as the first entry to name one recorded it
	deleted   *AuditEntry // its deletion certificate
}

// verifyStore checks every stored version against the entry that bound it,
// and the stored memories against those the log records (see VerifyAudit),
// recording the problems in rep. Its error is a failure to read.
func verifyStore(ctx context.Context, tx ReadTx, log []AuditEntry, rep *AuditReport) error {
	type bound struct {
		entry *AuditEntry
		hash  string
	}
	bindings := map[versionKey]bound{}
	memories := map[int64]*logged{}
	of := func(id int64) *logged {
		l := memories[id]
		if l == nil {
			l = &logged{}
			memories[id] = l
		}
		return l
	}
	// firstCreated is the lowest id whose version 1 the log binds: memories
	// written before the store kept provenance have lower ids.
	firstCreated := int64(math.MaxInt64)
	note := func(a *AuditEntry, id int64, v int, hash, ns string) {
		bindings[versionKey{id, v}] = bound{a, hash}
		l := of(id)
		if l.bound == nil {
			l.bound = a
		}
		if l.namespace == "" {
			l.namespace = ns
		}
		if v == 1 {
			firstCreated = min(firstCreated, id)
		}
	}
	for i := range log {
		a := &log[i]
		if deletes(a) {
			of(a.MemoryID).deleted = a
		}
		if a.Detail == "" {
			continue
		}
		var b binding
		if err := json.Unmarshal([]byte(a.Detail), &b); err != nil {
			rep.problem(AuditProblem{Entry: a.Seq, MemoryID: a.MemoryID,
				Message: fmt.Sprintf("audit entry %d (%s) has a detail that is not JSON: %v", a.Seq, a.Action, err)})
			continue
		}
		if a.MemoryID != 0 && b.SHA256 != "" {
			note(a, a.MemoryID, b.Version, b.SHA256, b.Namespace)
		}
		for _, m := range b.Memories {
			note(a, m.ID, m.Version, m.SHA256, m.Namespace)
		}
	}
	var since time.Time
	if s, err := tx.Meta(metaAuditSince); err == nil {
		since, _ = time.Parse(time.RFC3339Nano, s)
	} else if !errors.Is(err, ErrNotFound) {
		return err
	}
	check := func(m *Memory, row string) {
		bd, ok := bindings[versionKey{m.ID, m.Version}]
		if !ok {
			if since.IsZero() || m.UpdatedAt.Before(since) {
				rep.Unbound++
				return
			}
			rep.problem(AuditProblem{MemoryID: m.ID, Version: m.Version,
				Message: fmt.Sprintf("memory %d version %d (%s) is bound by no audit entry: its id, version or time was altered, or it was written around the engine", m.ID, m.Version, row)})
			return
		}
		h := VersionHash(m)
		if h == bd.hash || slices.Contains(legacyVersionHashes(m), bd.hash) {
			return
		}
		a := bd.entry
		rep.problem(AuditProblem{Entry: a.Seq, MemoryID: m.ID, Version: m.Version,
			Message: fmt.Sprintf("audit entry %d (%s) binds memory %d version %d with SHA-256 %s, but the stored %s hashes to %s: the row was altered", a.Seq, a.Action, m.ID, m.Version, bd.hash, row, h)})
	}
	stored := map[int64]bool{}
	var ids []int64 // the stored memories whose versions are checked
	rep.Namespaces = map[string]int{}
	if err := tx.Scan(ScanOptions{}, func(m *Memory) error {
		stored[m.ID] = true
		rep.Memories++
		rep.Namespaces[m.Namespace]++
		l := memories[m.ID]
		switch {
		case l != nil && l.deleted != nil:
			a := l.deleted
			rep.problem(AuditProblem{Entry: a.Seq, MemoryID: m.ID,
				Message: fmt.Sprintf("memory %d (namespace %s) is in the store, but audit entry %d (%s) records its deletion: it was put back around the engine", m.ID, m.Namespace, a.Seq, a.Action)})
		case (l == nil || l.bound == nil) && !since.IsZero() && (m.ID > firstCreated || !m.UpdatedAt.Before(since)):
			rep.problem(AuditProblem{MemoryID: m.ID,
				Message: fmt.Sprintf("memory %d (namespace %s) is in the store, but no audit entry records it: it was written around the engine, or its id was altered", m.ID, m.Namespace)})
		default:
			check(m, "current record")
			ids = append(ids, m.ID)
		}
		return ctx.Err()
	}); err != nil {
		return err
	}
	for _, id := range ids {
		hist, err := tx.History(id)
		if err != nil {
			rep.problem(AuditProblem{MemoryID: id, Message: fmt.Sprintf("memory %d: its versions cannot be read: %v", id, err)})
			continue
		}
		for i, v := range hist {
			if v.ID != id || v.Version != i+1 {
				rep.problem(AuditProblem{MemoryID: id, Version: i + 1,
					Message: fmt.Sprintf("memory %d: version row %d reads as memory %d version %d: the row was altered", id, i+1, v.ID, v.Version)})
				continue
			}
			rep.Versions++
			check(v, "version row")
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	for _, id := range slices.Sorted(maps.Keys(memories)) {
		l := memories[id]
		if l.bound == nil || l.deleted != nil || stored[id] {
			continue
		}
		ns := l.namespace
		if ns == "" {
			ns = "not recorded"
		}
		rep.problem(AuditProblem{Entry: l.bound.Seq, MemoryID: id,
			Message: fmt.Sprintf("memory %d (namespace %s) is recorded by audit entry %d (%s) and no entry records its deletion, but the store has no such memory: it was removed around the engine", id, ns, l.bound.Seq, l.bound.Action)})
	}
	return nil
}

// AuditExport is the file `memos audit export` writes: the whole log, the
// head it ends at, and a SHA-256 over the entries, so that a third party can
// check it with VerifyAuditExport and no store.
type AuditExport struct {
	Format     string       `json:"format"`
	ExportedAt time.Time    `json:"exported_at"`
	Head       string       `json:"head"`
	Entries    []AuditEntry `json:"entries"`
	// Digest is the SHA-256 of the JSON encoding of Entries.
	Digest string `json:"entries_sha256"`
}

// AuditExportFormat names the current export format.
const AuditExportFormat = "memos-audit/1"

// ExportAudit verifies the store's audit log (VerifyAudit) and writes it to w
// as an AuditExport. It refuses to export a log that does not verify.
func (e *Engine) ExportAudit(ctx context.Context, w io.Writer) (*AuditReport, error) {
	const op = "audit export"
	rep, err := e.VerifyAudit(ctx)
	if err != nil {
		return rep, err
	}
	log, err := e.Audit(ctx, AuditFilter{})
	if err != nil {
		return nil, &Error{Op: op, Err: unwrapOp(err)}
	}
	if log == nil {
		log = []AuditEntry{}
	}
	ex := AuditExport{Format: AuditExportFormat, ExportedAt: e.clock(), Head: rep.Head, Entries: log}
	b, err := json.Marshal(log)
	if err != nil {
		return nil, &Error{Op: op, Err: err}
	}
	sum := sha256.Sum256(b)
	ex.Digest = hex.EncodeToString(sum[:])
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(ex); err != nil {
		return nil, &Error{Op: op, Err: err}
	}
	return rep, nil
}

// VerifyAuditExport checks an AuditExport read from r with no store: the
// format, the digest over the entries, and the hash chain up to the head.
func VerifyAuditExport(r io.Reader) (*AuditReport, error) {
	const op = "audit verify"
	var ex struct {
		AuditExport
		Entries json.RawMessage `json:"entries"`
	}
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ex); err != nil {
		return nil, &Error{Op: op, Err: invalidf("not an audit export: %v", err)}
	}
	if ex.Format != AuditExportFormat {
		return nil, &Error{Op: op, Err: invalidf("export format %q is not %s", ex.Format, AuditExportFormat)}
	}
	var log []AuditEntry
	if err := json.Unmarshal(ex.Entries, &log); err != nil {
		return nil, &Error{Op: op, Err: invalidf("entries: %v", err)}
	}
	// The digest is over the canonical encoding, so re-encode what was read.
	b, err := json.Marshal(log)
	if err != nil {
		return nil, &Error{Op: op, Err: err}
	}
	if log == nil {
		b = []byte("[]")
	}
	sum := sha256.Sum256(b)
	rep := &AuditReport{}
	verifyChain(log, ex.Head, rep)
	if d := hex.EncodeToString(sum[:]); d != ex.Digest {
		rep.problem(AuditProblem{Message: fmt.Sprintf("the entries hash to %s but the export records %s: the file was altered", d, ex.Digest)})
	}
	if err := rep.err(); err != nil {
		return rep, &Error{Op: op, Err: err}
	}
	return rep, nil
}

// changes describes what next changes compared with cur, for the audit
// entry of a new version: the names of the fields that changed, and the
// old and new values of validity, status and trust.
func changes(cur, next *Memory) map[string]any {
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
		d["source_sha256"] = sourceHash(next.Source)
	}
	d["changed"] = fields
	return d
}

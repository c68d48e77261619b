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
func VersionHash(m *Memory) string {
	c := *m
	c.LastAccessedAt, c.AccessCount = time.Time{}, 0
	c.Embedding.Vector = nil
	b, err := json.Marshal(&c)
	if err != nil {
		// Metadata was checked to be JSON-encodable on write; a version that
		// no longer encodes cannot match any recorded hash.
		return "unencodable: " + err.Error()
	}
	h := sha256.New()
	h.Write(b)
	var buf [4]byte
	for _, x := range m.Embedding.Vector {
		binary.LittleEndian.PutUint32(buf[:], math.Float32bits(x))
		h.Write(buf[:])
	}
	return hex.EncodeToString(h.Sum(nil))
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

// AuditReport is what VerifyAudit (or VerifyAuditExport) checked.
type AuditReport struct {
	Entries int    `json:"entries"`
	Head    string `json:"head"`
	// Memories and Versions count the stored memories and versions checked
	// against the entries that bind them (0 for an export).
	Memories int `json:"memories"`
	Versions int `json:"versions"`
	// Unbound counts versions written before the store began binding
	// versions to audit entries (by an older memos); they are not checked.
	Unbound int `json:"unbound,omitempty"`
	// BrokenEntry is the sequence number of the first entry that failed, 0
	// when the failure is not an entry's (or nothing failed).
	BrokenEntry uint64 `json:"broken_entry,omitempty"`
}

// verifyChain checks sequence numbers, hashes and links of log, which must
// end at head. It returns the report so far and an error naming the first
// broken entry.
func verifyChain(log []AuditEntry, head string) (*AuditReport, error) {
	rep := &AuditReport{Entries: len(log)}
	prev := ""
	for i := range log {
		a := &log[i]
		var why string
		switch {
		case a.Seq != uint64(i+1):
			why = fmt.Sprintf("is number %d in the log but carries sequence number %d: entries were removed, reordered or renumbered", i+1, a.Seq)
		case a.PrevHash != prev:
			why = "does not chain to the entry before it"
		case AuditHash(a) != a.Hash:
			why = fmt.Sprintf("was altered (hash %s, recomputed %s)", a.Hash, AuditHash(a))
		}
		if why != "" {
			rep.BrokenEntry = uint64(i + 1)
			return rep, fmt.Errorf("%w: audit entry %d (%s) %s", ErrConflict, i+1, a.Action, why)
		}
		prev = a.Hash
	}
	rep.Head = prev
	if head != prev {
		return rep, fmt.Errorf("%w: the log ends at hash %q but the head recorded is %q: entries were removed", ErrConflict, prev, head)
	}
	return rep, nil
}

// binding is the part of an entry's detail that binds a memory version:
// the entry's own memory's (version, sha256), or a batch's list.
type binding struct {
	Version  int    `json:"version"`
	SHA256   string `json:"sha256"`
	Memories []struct {
		ID      int64  `json:"id"`
		Version int    `json:"version"`
		SHA256  string `json:"sha256"`
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

// VerifyAudit checks that the store has not been altered behind the
// engine's back: the audit log's hash chain (every entry's hash, its link
// to the one before, contiguous sequence numbers, the head the store
// recorded), and every stored memory version — the current row and every
// version row — against the entry that bound it when it was written. The
// error names the first broken entry (or memory version) and wraps
// ErrConflict; the report says what was checked.
func (e *Engine) VerifyAudit(ctx context.Context) (*AuditReport, error) {
	const op = "audit verify"
	if err := e.checkOpen(op); err != nil {
		return nil, err
	}
	var rep *AuditReport
	err := e.b.View(ctx, func(tx ReadTx) error {
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
		if rep, err = verifyChain(log, head); err != nil {
			return err
		}
		return verifyBindings(ctx, tx, log, rep)
	})
	if err != nil {
		return rep, &Error{Op: op, Err: err}
	}
	return rep, nil
}

type versionKey struct {
	id int64
	v  int
}

// verifyBindings checks every stored version against the entry that bound it.
func verifyBindings(ctx context.Context, tx ReadTx, log []AuditEntry, rep *AuditReport) error {
	type bound struct {
		entry *AuditEntry
		hash  string
	}
	bindings := map[versionKey]bound{}
	for i := range log {
		a := &log[i]
		if a.Detail == "" {
			continue
		}
		var b binding
		if err := json.Unmarshal([]byte(a.Detail), &b); err != nil {
			rep.BrokenEntry = a.Seq
			return fmt.Errorf("%w: audit entry %d (%s) has a detail that is not JSON: %v", ErrConflict, a.Seq, a.Action, err)
		}
		if a.MemoryID != 0 && b.SHA256 != "" {
			bindings[versionKey{a.MemoryID, b.Version}] = bound{a, b.SHA256}
		}
		for _, m := range b.Memories {
			bindings[versionKey{m.ID, m.Version}] = bound{a, m.SHA256}
		}
	}
	var since time.Time
	if s, err := tx.Meta(metaAuditSince); err == nil {
		since, _ = time.Parse(time.RFC3339Nano, s)
	} else if !errors.Is(err, ErrNotFound) {
		return err
	}
	check := func(m *Memory, row string) error {
		bd, ok := bindings[versionKey{m.ID, m.Version}]
		if !ok {
			if since.IsZero() || m.UpdatedAt.Before(since) {
				rep.Unbound++
				return nil
			}
			return fmt.Errorf("%w: memory %d version %d (%s) is bound by no audit entry: its id, version or time was altered, or it was written around the engine", ErrConflict, m.ID, m.Version, row)
		}
		if h := VersionHash(m); h != bd.hash {
			a := bd.entry
			rep.BrokenEntry = a.Seq
			return fmt.Errorf("%w: audit entry %d (%s) binds memory %d version %d with SHA-256 %s, but the stored %s hashes to %s: the row was altered", ErrConflict, a.Seq, a.Action, m.ID, m.Version, bd.hash, row, h)
		}
		return nil
	}
	var ids []int64
	if err := tx.Scan(ScanOptions{}, func(m *Memory) error {
		ids = append(ids, m.ID)
		rep.Memories++
		if err := check(m, "current record"); err != nil {
			return err
		}
		return ctx.Err()
	}); err != nil {
		return err
	}
	for _, id := range ids {
		hist, err := tx.History(id)
		if err != nil {
			return fmt.Errorf("%w: memory %d: its versions cannot be read: %v", ErrConflict, id, err)
		}
		for i, v := range hist {
			if v.ID != id || v.Version != i+1 {
				return fmt.Errorf("%w: memory %d: version row %d reads as memory %d version %d: the row was altered", ErrConflict, id, i+1, v.ID, v.Version)
			}
			rep.Versions++
			if err := check(v, "version row"); err != nil {
				return err
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
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
	if d := hex.EncodeToString(sum[:]); d != ex.Digest {
		rep, err := verifyChain(log, ex.Head)
		if err != nil {
			return rep, &Error{Op: op, Err: err}
		}
		return rep, &Error{Op: op, Err: fmt.Errorf("%w: the entries hash to %s but the export records %s: the file was altered", ErrConflict, d, ex.Digest)}
	}
	rep, err := verifyChain(log, ex.Head)
	if err != nil {
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

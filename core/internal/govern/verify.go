package govern

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/memos-go/memos/core/driver"
)

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
	// Before selects the entries whose sequence number is below it (0: no
	// bound). Last, when positive, keeps the last Last entries that match
	// (still oldest first): with Before, the log is paged backwards.
	Before uint64 `json:"before,omitempty"`
	Last   int    `json:"last,omitempty"`
}

// errEnough stops a read that found what it was after.
var errEnough = errors.New("enough")

// Audit lists the entries of the log read through tx that match f, oldest
// first.
func Audit(tx driver.ReadTx, f AuditFilter) ([]driver.AuditEntry, error) {
	srcHash := SourceHash(f.Source)
	var out []driver.AuditEntry
	keep := func(a driver.AuditEntry) error {
		if f.match(&a, srcHash) {
			out = append(out, a)
		}
		return nil
	}
	var err error
	if ar, ok := tx.(driver.AuditMemoryReader); ok && f.MemoryID != 0 {
		// The memory's own entries and the batch entries that bind it,
		// through the backend's indexes, in log order: those the backend
		// files under the memory, or else every entry about no one memory.
		if err := ar.AuditOf(f.MemoryID, keep); err != nil {
			return nil, err
		}
		own := len(out)
		if br, ok := tx.(driver.AuditBindingReader); ok {
			err = br.AuditBound(f.MemoryID, keep)
		} else {
			err = ar.AuditOf(0, keep)
		}
		if err != nil {
			return nil, err
		}
		if own > 0 && own < len(out) {
			slices.SortFunc(out, func(a, b driver.AuditEntry) int { return cmp.Compare(a.Seq, b.Seq) })
		}
	} else if tr, ok := tx.(driver.AuditTailReader); ok && f.Last > 0 {
		// The latest entries, read newest first until Last match.
		err = tr.AuditBefore(f.Before, func(a driver.AuditEntry) error {
			if !f.match(&a, srcHash) {
				return nil
			}
			out = append(out, a)
			if len(out) == f.Last {
				return errEnough
			}
			return nil
		})
		if errors.Is(err, errEnough) {
			err = nil
		}
		slices.Reverse(out)
	} else {
		err = Read(tx, keep)
	}
	if f.Last > 0 && len(out) > f.Last {
		out = out[len(out)-f.Last:]
	}
	return out, err
}

func (f *AuditFilter) match(a *driver.AuditEntry, srcHash string) bool {
	switch {
	case f.Before != 0 && a.Seq >= f.Before:
		return false
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

// Read calls fn with every entry of the log, oldest first; it needs a
// backend whose ReadTx implements driver.AuditReader.
func Read(tx driver.ReadTx, fn func(driver.AuditEntry) error) error {
	ar, ok := tx.(driver.AuditReader)
	if !ok {
		return fmt.Errorf("%w: this backend cannot list its audit log", driver.ErrInvalid)
	}
	return ar.Audit(fn)
}

// AuditReport is what Verify (or VerifyExport) checked, and what it found
// wrong.
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

// MaxAuditProblems bounds AuditReport.Problems (and the error Problems
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

// Problems is the error for the problems rep found (nil for none),
// wrapping driver.ErrConflict: the one problem's message, or every problem
// listed, one per line, so that a later tamper is not hidden behind an
// earlier one.
func Problems(r *AuditReport) error {
	switch r.Broken {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("%w: %s", driver.ErrConflict, r.Problems[0].Message)
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
	return fmt.Errorf("%w: %s", driver.ErrConflict, b.String())
}

// verifyChain checks sequence numbers, hashes and links of log, which must
// end at head, and records every broken entry in rep. An entry is checked
// against the entry before it as stored, so that one altered or removed
// entry is one problem, not one for every entry after it.
func verifyChain(log []driver.AuditEntry, head string, rep *AuditReport) {
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
func bindsMemory(a *driver.AuditEntry, id int64) bool {
	if a.MemoryID != 0 || !strings.Contains(a.Detail, `"memories":`) {
		return false
	}
	// A binding's id is written "id":<digits>: skip decoding a batch's
	// bindings (kilobytes each) when none can be id's.
	key := `"id":` + strconv.FormatInt(id, 10)
	if !strings.Contains(a.Detail, key+",") && !strings.Contains(a.Detail, key+"}") {
		return false
	}
	return slices.Contains(driver.BoundIDs(a), id)
}

// deletes reports whether a is the deletion certificate of its memory.
func deletes(a *driver.AuditEntry) bool {
	return a.MemoryID != 0 && (a.Action == "forget" || a.Action == "quarantine.reject")
}

// Verify checks, through tx, that the store has not been altered behind
// the engine's back, and fills rep (reset first) with what it checked and
// found: the audit log's hash chain (every entry's hash, its link to the
// one before, contiguous sequence numbers, the head the store recorded);
// every stored memory version — the current row and every version row —
// against the entry that bound it when it was written; and that the store
// holds the memories the log says exist, and only those:
//   - a memory some entry binds a version of, and no deletion certificate
//     (forget, quarantine.reject) names, must be in the store;
//   - a memory a deletion certificate names must not be;
//   - a memory in the store must be bound by an entry, unless it was
//     written before the store kept provenance (by an older memos): its
//     versions predate the store's first audit entry and its id is below
//     every id whose creation the log records. Such versions are counted
//     as unbound.
//
// Its error is a failure to read; Problems(rep) is the error for what it
// found.
func Verify(ctx context.Context, tx driver.ReadTx, rep *AuditReport) error {
	*rep = AuditReport{}
	var log []driver.AuditEntry
	if err := Read(tx, func(a driver.AuditEntry) error {
		log = append(log, a)
		return nil
	}); err != nil {
		return err
	}
	head, err := tx.Meta(MetaHead)
	if err != nil && !errors.Is(err, driver.ErrNotFound) {
		return err
	}
	verifyChain(log, head, rep)
	return verifyStore(ctx, tx, log, rep)
}

type versionKey struct {
	id int64
	v  int
}

// logged is what the audit log says of one memory.
type logged struct {
	bound     *driver.AuditEntry // the first entry that binds a version of it
	namespace string             // its namespace, as the first entry to name one recorded it
	deleted   *driver.AuditEntry // its deletion certificate
}

// bound is the entry that bound a version, and the hash it bound.
type bound struct {
	entry *driver.AuditEntry
	hash  string
}

// ledger is what the log says of the store: the versions it binds and
// the memories it records.
type ledger struct {
	bindings map[versionKey]bound
	memories map[int64]*logged
	// firstCreated is the lowest id whose version 1 the log binds: memories
	// written before the store kept provenance have lower ids.
	firstCreated int64
	// since is when the store began binding versions (zero: unknown).
	since time.Time
}

// readLedger gathers what log says of the store, recording undecodable
// entries in rep.
func readLedger(log []driver.AuditEntry, rep *AuditReport) *ledger {
	l := &ledger{bindings: map[versionKey]bound{}, memories: map[int64]*logged{}, firstCreated: math.MaxInt64}
	note := func(a *driver.AuditEntry, id int64, v int, hash, ns string) {
		l.bindings[versionKey{id, v}] = bound{a, hash}
		m := l.of(id)
		if m.bound == nil {
			m.bound = a
		}
		if m.namespace == "" {
			m.namespace = ns
		}
		if v == 1 {
			l.firstCreated = min(l.firstCreated, id)
		}
	}
	for i := range log {
		a := &log[i]
		if deletes(a) {
			l.of(a.MemoryID).deleted = a
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
	return l
}

func (l *ledger) of(id int64) *logged {
	m := l.memories[id]
	if m == nil {
		m = &logged{}
		l.memories[id] = m
	}
	return m
}

// check checks stored version m (read from row: "current record" or
// "version row") against the entry that bound it.
func (l *ledger) check(m *driver.Memory, row string, rep *AuditReport) {
	bd, ok := l.bindings[versionKey{m.ID, m.Version}]
	if !ok {
		if l.since.IsZero() || m.UpdatedAt.Before(l.since) {
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

// verifyStore checks every stored version against the entry that bound it,
// and the stored memories against those the log records (see Verify),
// recording the problems in rep. Its error is a failure to read.
func verifyStore(ctx context.Context, tx driver.ReadTx, log []driver.AuditEntry, rep *AuditReport) error {
	l := readLedger(log, rep)
	if s, err := tx.Meta(MetaSince); err == nil {
		l.since, _ = time.Parse(time.RFC3339Nano, s)
	} else if !errors.Is(err, driver.ErrNotFound) {
		return err
	}
	stored, ids, err := l.checkCurrent(ctx, tx, rep)
	if err != nil {
		return err
	}
	if err := l.checkVersions(ctx, tx, ids, rep); err != nil {
		return err
	}
	for _, id := range slices.Sorted(maps.Keys(l.memories)) {
		m := l.memories[id]
		if m.bound == nil || m.deleted != nil || stored[id] {
			continue
		}
		ns := m.namespace
		if ns == "" {
			ns = "not recorded"
		}
		rep.problem(AuditProblem{Entry: m.bound.Seq, MemoryID: id,
			Message: fmt.Sprintf("memory %d (namespace %s) is recorded by audit entry %d (%s) and no entry records its deletion, but the store has no such memory: it was removed around the engine", id, ns, m.bound.Seq, m.bound.Action)})
	}
	return nil
}

// checkCurrent checks every stored memory's current record and returns
// the stored ids and those whose versions are to be checked.
func (l *ledger) checkCurrent(ctx context.Context, tx driver.ReadTx, rep *AuditReport) (map[int64]bool, []int64, error) {
	stored := map[int64]bool{}
	var ids []int64
	rep.Namespaces = map[string]int{}
	err := tx.Scan(driver.ScanOptions{}, func(m *driver.Memory) error {
		stored[m.ID] = true
		rep.Memories++
		rep.Namespaces[m.Namespace]++
		lm := l.memories[m.ID]
		switch {
		case lm != nil && lm.deleted != nil:
			a := lm.deleted
			rep.problem(AuditProblem{Entry: a.Seq, MemoryID: m.ID,
				Message: fmt.Sprintf("memory %d (namespace %s) is in the store, but audit entry %d (%s) records its deletion: it was put back around the engine", m.ID, m.Namespace, a.Seq, a.Action)})
		case (lm == nil || lm.bound == nil) && !l.since.IsZero() && (m.ID > l.firstCreated || !m.UpdatedAt.Before(l.since)):
			rep.problem(AuditProblem{MemoryID: m.ID,
				Message: fmt.Sprintf("memory %d (namespace %s) is in the store, but no audit entry records it: it was written around the engine, or its id was altered", m.ID, m.Namespace)})
		default:
			l.check(m, "current record", rep)
			ids = append(ids, m.ID)
		}
		return ctx.Err()
	})
	return stored, ids, err
}

// checkVersions checks every version row of the memories ids.
func (l *ledger) checkVersions(ctx context.Context, tx driver.ReadTx, ids []int64, rep *AuditReport) error {
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
			l.check(v, "version row", rep)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}

// AuditExport is the file `memos audit export` writes: the whole log, the
// head it ends at, and a SHA-256 over the entries, so that a third party can
// check it with VerifyExport and no store.
type AuditExport struct {
	Format     string              `json:"format"`
	ExportedAt time.Time           `json:"exported_at"`
	Head       string              `json:"head"`
	Entries    []driver.AuditEntry `json:"entries"`
	// Digest is the SHA-256 of the JSON encoding of Entries.
	Digest string `json:"entries_sha256"`
}

// AuditExportFormat names the current export format.
const AuditExportFormat = "memos-audit/1"

// WriteExport writes log, which ends at head, to w as an AuditExport made
// at time at.
func WriteExport(w io.Writer, head string, log []driver.AuditEntry, at time.Time) error {
	if log == nil {
		log = []driver.AuditEntry{}
	}
	ex := AuditExport{Format: AuditExportFormat, ExportedAt: at, Head: head, Entries: log}
	b, err := json.Marshal(log)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(b)
	ex.Digest = hex.EncodeToString(sum[:])
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(ex)
}

// VerifyExport checks an AuditExport read from r with no store: the
// format, the digest over the entries, and the hash chain up to the head.
// A file that is no export is driver.ErrInvalid; what the check found is
// in the report, and Problems(rep) is its error.
func VerifyExport(r io.Reader) (*AuditReport, error) {
	var ex struct {
		AuditExport
		Entries json.RawMessage `json:"entries"`
	}
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ex); err != nil {
		return nil, driver.Invalidf("not an audit export: %v", err)
	}
	if ex.Format != AuditExportFormat {
		return nil, driver.Invalidf("export format %q is not %s", ex.Format, AuditExportFormat)
	}
	var log []driver.AuditEntry
	if err := json.Unmarshal(ex.Entries, &log); err != nil {
		return nil, driver.Invalidf("entries: %v", err)
	}
	// The digest is over the canonical encoding, so re-encode what was read.
	b, err := json.Marshal(log)
	if err != nil {
		return nil, err
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
	return rep, nil
}

package driver

import (
	"cmp"
	"context"
	"time"

	"github.com/memos-go/memos/core/query"
)

// This file holds the interfaces a storage backend implements. Users never
// call them: they call the Engine, which validates input, assigns ids,
// versions and timestamps, embeds content and keeps the vector index.
//
// A backend is the store of record (memories and their versions), a keyword
// index over the current version of every memory, and a graph of edges. The
// store of record and the keyword index must agree after every committed
// transaction and after a crash: a memory and all its index entries exist, or
// none do.

// Backend is a storage backend. Implementations must be safe for concurrent
// use; several processes may open the same store, in which case writers wait
// for each other (they must not fail with "busy").
type Backend interface {
	// View runs fn in a read-only transaction that sees one consistent snapshot.
	// The transaction is bound to ctx; fn must not keep tx after it returns.
	View(ctx context.Context, fn func(tx ReadTx) error) error
	// Update runs fn in a read-write transaction. Everything fn writes —
	// records, versions, keyword entries, vectors, edges, audit entries —
	// commits together when fn returns nil, and not at all otherwise.
	Update(ctx context.Context, fn func(tx Tx) error) error
	KeywordIndex
	// Close releases the backend. Later calls return ErrClosed.
	Close() error
}

// KeywordIndex searches the current version of every memory by keyword.
type KeywordIndex interface {
	// SearchKeyword returns up to limit memories that match q and f, best
	// first (higher Score is better; ties broken by ascending ID). Matching is
	// case-insensitive with English (porter) stemming; Term.Prefix matches any
	// token that starts with the term. Semantics must be identical across
	// backends: the conformance suite checks every operator.
	SearchKeyword(ctx context.Context, q query.Node, f Filter, limit int) ([]Hit, error)
}

// Filter restricts reads. A nil slice places no restriction on that field.
type Filter struct {
	Namespaces []string
	Pools      []Pool
	Statuses   []Status
	Types      []Type
}

// Hit is a search result: a memory id and a score (higher is better).
type Hit struct {
	ID    int64   `json:"id"`
	Score float64 `json:"score"`
}

// ScanOptions selects and pages memories for ReadTx.Scan.
type ScanOptions struct {
	Filter
	AfterID int64 // only ids greater than this
	Limit   int   // 0 means no limit
}

// ReadTx is a read-only transaction. Returned values are fresh; callers own them.
type ReadTx interface {
	// Get returns version v of memory id, or its current version when v is 0.
	// It returns ErrNotFound for an unknown id or version.
	Get(id int64, v int) (*Memory, error)
	// History returns every version of id, oldest first, or ErrNotFound.
	History(id int64) ([]*Memory, error)
	// Scan calls fn with the current version of every memory that matches
	// opts, in ascending id order, until fn returns an error (which Scan returns).
	Scan(opts ScanOptions, fn func(*Memory) error) error
	// Edges returns the edges that start or end at id, ordered by (From, To, Type).
	Edges(id int64) ([]Edge, error)
	ChangeLog
	// Meta returns a store-level setting, or ErrNotFound.
	Meta(key string) (string, error)
}

// ChangeLog lets the engine keep derived state (the in-memory vector index)
// in step with the store, including writes made by other processes.
type ChangeLog interface {
	// Seq returns the sequence number of the latest committed change (0 for a
	// new store). It grows with every write except Touch.
	Seq() (uint64, error)
	// Changes calls fn, in ascending Seq order, once for every memory changed
	// after since: with its latest state, or with Deleted set when it was
	// forgotten. Changes(0) therefore lists every live memory.
	Changes(since uint64, fn func(Change) error) error
}

// Change is one entry of the change log. It carries what derived indexes
// need, not the content.
type Change struct {
	Seq       uint64
	ID        int64
	Deleted   bool
	Namespace string
	Pool      Pool
	Status    Status
	Embedding Embedding
}

// Tx is a read-write transaction.
type Tx interface {
	ReadTx
	// Insert stores m as version 1 of a new memory. It assigns m.ID: ids grow
	// and are never reused, also after Delete. m.Version must be 1.
	Insert(m *Memory) error
	// Put stores m as a new version of an existing memory and makes it the
	// current one (record, keyword index and vector). m.Version must be the
	// current version + 1, else ErrConflict; an unknown id is ErrNotFound.
	Put(m *Memory) error
	// Delete removes every version, keyword entry, vector and edge of id, so
	// that no byte of its content remains reachable; ErrNotFound if unknown.
	Delete(id int64) error
	// Touch records an access to ids at t (access count, last access). It
	// writes no version and does not advance Seq. Unknown ids are ignored.
	Touch(ids []int64, t time.Time) error
	GraphWriter
	// SetMeta stores a store-level setting.
	SetMeta(key, value string) error
	// AppendAudit appends e to the audit log, assigning e.Seq.
	AppendAudit(e *AuditEntry) error
}

// GraphWriter writes edges.
type GraphWriter interface {
	// Link adds or replaces the edge (From, To, Type); ErrNotFound when either
	// end does not exist.
	Link(e Edge) error
	// Unlink removes the edge (from, to, t); ErrNotFound when it does not exist.
	Unlink(from, to int64, t EdgeType) error
}

// AuditEntry is one record of the tamper-evident audit log. The engine fills
// Hash as a SHA-256 over the previous entry's hash and this entry's fields, so
// that any change to the log breaks the chain.
type AuditEntry struct {
	Seq      uint64    `json:"seq"`
	Time     time.Time `json:"time"`
	Action   string    `json:"action"` // e.g. "forget", "quarantine.release"
	MemoryID int64     `json:"memory_id,omitempty"`
	Detail   string    `json:"detail,omitempty"` // JSON object, never the forgotten content
	PrevHash string    `json:"prev_hash"`
	Hash     string    `json:"hash"`
}

// AuditReader is an optional interface of ReadTx for backends that can list
// the audit log.
type AuditReader interface {
	// Audit calls fn for every audit entry in ascending Seq order.
	Audit(fn func(AuditEntry) error) error
}

// MultiGetter is an optional interface of ReadTx for backends that read
// many memories at once much faster than one at a time, such as a database
// server a network round trip away. The engine loads a search's candidates
// with it. A backend that implements it must pass its conformance case.
type MultiGetter interface {
	// GetMany returns the current version of every memory of ids that
	// exists, keyed by id; unknown ids are absent. Duplicate ids are allowed.
	GetMany(ids []int64) (map[int64]*Memory, error)
}

// ChangeWaiter is an optional interface of Backend for stores that several
// processes write to and that can say when another one did (PostgreSQL's
// LISTEN/NOTIFY). The engine waits on it in the background and brings its
// vector index up to date soon after any process writes, instead of at its
// next search; it still reads the change log before every search, so
// correctness never depends on a notification arriving.
type ChangeWaiter interface {
	// WaitChange blocks until the store's change sequence number (ChangeLog.Seq)
	// is past after, and returns it; or until ctx ends, returning ctx's error.
	// It may return early with an error when the store is unreachable.
	WaitChange(ctx context.Context, after uint64) (uint64, error)
}

// Importer is an optional interface of Tx for backends that can take
// memories with their ids, which copying a store between backends needs
// (see Migrate). A backend that implements it must pass its conformance case.
type Importer interface {
	// InsertAt stores m as version 1 of memory m.ID, which must be positive
	// and unused (ErrConflict otherwise); later versions follow with Put.
	InsertAt(m *Memory) error
	// ReserveIDs makes sure Insert never assigns an id up to and including id,
	// so that ids forgotten in the source store are not reused in the copy.
	ReserveIDs(id int64) error
}

// Remover is an optional interface of Backend for backends that can delete
// their own store. `memos migrate --force` uses it to start an interrupted
// copy over. Remove closes the backend, then deletes every file of the store.
type Remover interface {
	Remove() error
}

// BackendStater is an optional interface of Backend that reports
// backend-specific figures for Stats.
type BackendStater interface {
	BackendStats(ctx context.Context) (map[string]any, error)
}

// Eraser is an optional interface of Backend for backends whose Delete can
// leave bytes of the deleted content in the store's files after the commit,
// in pages that a reader of an older snapshot still uses, and that remove
// them once those readers are gone. The engine uses it to tell in the
// deletion certificate whether erasure is complete and to wait for it.
//
// A backend that implements it keeps the pending erasure durable: when the
// process ends before it completes, the next Open of the store completes it.
type Eraser interface {
	// Erase removes what deleted memories left in the store's files, waiting
	// up to wait for the readers that still use those bytes (0: do not wait).
	// It reports whether nothing is left; false means the erasure is still
	// pending and the backend completes it later by itself.
	Erase(ctx context.Context, wait time.Duration) (bool, error)
}

// ErasureReporter is an optional interface of Backend that says, in the
// backend's own words, what its deletes leave of the deleted content. The
// engine copies the report into every deletion certificate. A backend
// without it is assumed to leave anything anywhere: its certificates say
// the erasure is unknown.
type ErasureReporter interface {
	// Erasure describes the bytes of the memories deleted by the
	// transactions this process has committed so far, after whatever the
	// backend does once a delete committed. It may finish work that is
	// pending and ready (as Erase with no wait does), never waits for
	// readers.
	Erasure(ctx context.Context) (Erasure, error)
}

// Erasure is an ErasureReporter's report. Each entry is one sentence for a
// person: what happened or remains, and what removes it. Copies outside
// the store that no backend can reach (the file system's old blocks and
// snapshots, backups someone took of the files) are not listed; copies
// the store itself keeps or makes (a database server's write-ahead log,
// its replicas and archives) are.
type Erasure struct {
	// Done lists what has been done to remove the deleted content's bytes.
	Done []string
	// Pending lists bytes left in the store that the backend, or its
	// server, removes by itself later (Eraser, if implemented, waits for
	// the backend's).
	Pending []string
	// OutOfReach lists bytes left in the store, or copies of them, that
	// only an operator can remove, and how.
	OutOfReach []string
}

// SessionReader is an optional interface of ReadTx for backends that index
// memories by session. Session expansion uses it to find a result's
// neighbours in its conversation; without it the engine keeps its own
// session index, built by scanning the store on the first search that
// expands.
type SessionReader interface {
	// Session returns the current version of every memory of session in
	// namespace, whatever its status, in any order. session is not empty.
	Session(namespace, session string) ([]SessionMember, error)
}

// SessionMember is a memory of a session, with what orders it in the
// session: event time, then ingest time, then id.
type SessionMember struct {
	ID        int64
	ValidFrom time.Time
	CreatedAt time.Time
}

// UpdateReader is an optional interface of ReadTx for backends that index
// memories by the time their current version was written. A search as of
// a past time uses it to find the memories changed since, which it rewinds
// to their version at that time; without it the engine scans the scope.
type UpdateReader interface {
	// UpdatedAfter calls fn, in any order, with the current version of
	// every memory of namespaces whose UpdatedAt is after t, whatever its
	// status, until fn returns an error (which UpdatedAfter returns).
	UpdatedAfter(namespaces []string, t time.Time, fn func(*Memory) error) error
}

// RankReader is an optional interface of ReadTx for backends that index
// memories in rank order (see CompareRank). The bootstrap context pack reads
// the first memories of its scope in that order and stops; without it the
// engine reads and sorts the whole scope.
type RankReader interface {
	// Ranked calls fn with the current version of every memory that
	// matches f, in rank order, until fn returns an error (which Ranked
	// returns). f.Namespaces, f.Statuses and f.Types must not be nil: they
	// name every value wanted (f.Pools may be nil, for any pool).
	Ranked(f Filter, fn func(*Memory) error) error
}

// CompareRank orders memories for the bootstrap context pack: most
// significant first, then most accessed, then most recently accessed
// (never accessed last), then lowest id. It returns a negative number when
// a comes first.
func CompareRank(a, b *Memory) int {
	switch {
	case a.Significance != b.Significance:
		return cmp.Compare(b.Significance, a.Significance)
	case a.AccessCount != b.AccessCount:
		return cmp.Compare(b.AccessCount, a.AccessCount)
	case !a.LastAccessedAt.Equal(b.LastAccessedAt):
		return b.LastAccessedAt.Compare(a.LastAccessedAt)
	}
	return cmp.Compare(a.ID, b.ID)
}

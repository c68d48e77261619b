package driver

import (
	"encoding/json"
	"strings"
)

// CountOptions selects the memories Counter.Count counts.
type CountOptions struct {
	// Namespaces names every namespace counted; nil counts every one.
	Namespaces []string
	// Model and Dim select the embeddings FacetCount.Embedded counts.
	Model string
	Dim   int
}

// FacetCount counts the memories that share a namespace, pool, type and
// status.
type FacetCount struct {
	Namespace string
	Pool      Pool
	Type      Type
	Status    Status
	// Memories counts them; Versions sums their version numbers (the
	// versions they have).
	Memories int
	Versions int
	// Embedded counts those that are active and hold an embedding of
	// CountOptions.Model and Dim.
	Embedded int
}

// Counter is an optional interface of ReadTx for backends that count
// memories per facet without reading them (an aggregate over an index, or
// counts kept in the write transaction), so that the engine's Stats takes
// time that does not grow with the memories' size. Without it Stats reads
// every memory. A backend that implements it must pass its conformance
// case.
type Counter interface {
	// Count returns one FacetCount for every combination of namespace,
	// pool, type and status that a memory selected by opts has, in no
	// particular order.
	Count(opts CountOptions) ([]FacetCount, error)
	// CountEdges returns the number of edges both of whose ends are
	// memories of namespaces (nil: every edge).
	CountEdges(namespaces []string) (int, error)
}

// AuditMemoryReader is an optional interface of ReadTx for backends that
// index the audit log by memory, so that the entries about one memory are
// read without reading the whole log. (The batch entries that bind it
// have MemoryID 0: see AuditBindingReader.)
type AuditMemoryReader interface {
	// AuditOf calls fn for every audit entry whose MemoryID is id (0: the
	// entries about no one memory), in ascending Seq order, until fn
	// returns an error (which AuditOf returns).
	AuditOf(id int64, fn func(AuditEntry) error) error
}

// AuditTailReader is an optional interface of ReadTx for backends that read
// the audit log newest first, so that its latest entries (the console's
// recent activity, `memos audit --last`) are read without the rest of the
// log. Without it the engine reads the whole log to find them.
type AuditTailReader interface {
	// AuditBefore calls fn for every audit entry whose Seq is below before
	// (0: every entry), in descending Seq order, until fn returns an error
	// (which AuditBefore returns).
	AuditBefore(before uint64, fn func(AuditEntry) error) error
}

// AuditBindingReader is an optional interface of ReadTx for backends that
// index the audit log's batch entries by the memories they bind, so that
// the entries of one memory that was written in a batch (remember-batch,
// import: one entry binds many memories) are read without every other
// batch entry. Without it the engine reads every entry about no one memory
// (AuditMemoryReader.AuditOf(0)) to find them.
type AuditBindingReader interface {
	// AuditBound calls fn for every audit entry that binds memory id in a
	// batch (id is in BoundIDs of it), in ascending Seq order, until fn
	// returns an error (which AuditBound returns).
	AuditBound(id int64, fn func(AuditEntry) error) error
}

// BoundIDs returns the ids of the memories that audit entry e binds in a
// batch: an entry about no one memory (MemoryID 0) whose Detail is a JSON
// object with an array "memories" of objects, each with its memory's
// "id". Any other entry binds none in a batch.
func BoundIDs(e *AuditEntry) []int64 {
	if e.MemoryID != 0 || !strings.Contains(e.Detail, `"memories"`) {
		return nil
	}
	var d struct {
		Memories []json.RawMessage `json:"memories"`
	}
	if json.Unmarshal([]byte(e.Detail), &d) != nil {
		return nil
	}
	// An element that is not an object with a whole-number id is skipped
	// (as SQL's JSON functions would), not the whole list.
	var ids []int64
	for _, raw := range d.Memories {
		var m struct {
			ID *int64 `json:"id"`
		}
		if json.Unmarshal(raw, &m) == nil && m.ID != nil {
			ids = append(ids, *m.ID)
		}
	}
	return ids
}

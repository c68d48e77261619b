package driver

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
// read without reading the whole log.
type AuditMemoryReader interface {
	// AuditOf calls fn for every audit entry whose MemoryID is id (0: the
	// entries about no one memory), in ascending Seq order, until fn
	// returns an error (which AuditOf returns).
	AuditOf(id int64, fn func(AuditEntry) error) error
}

package sqlite

import (
	"github.com/memos-go/memos/backends/internal/sqlrow"
	"github.com/memos-go/memos/core/driver"
)

var (
	_ driver.Counter            = (*readTx)(nil)
	_ driver.AuditMemoryReader  = (*readTx)(nil)
	_ driver.AuditTailReader    = (*readTx)(nil)
	_ driver.AuditBindingReader = (*readTx)(nil)
)

// Count counts memories per facet (driver.Counter) with one aggregate over
// the index memories_facets, which holds every column it reads: the wide
// rows (content, a kilobyte-sized embedding) are not read.
func (t *readTx) Count(opts driver.CountOptions) ([]driver.FacetCount, error) {
	q := `SELECT namespace, pool, type, status, COUNT(*), SUM(version),
		SUM(status = 'active' AND embedding_model = ? AND embedding_dim = ?)
		FROM memories INDEXED BY memories_facets`
	args := []any{opts.Model, opts.Dim}
	if opts.Namespaces != nil {
		if len(opts.Namespaces) == 0 {
			return nil, nil
		}
		q += ` WHERE namespace IN (` + placeholders(len(opts.Namespaces)) + `)`
		for _, ns := range opts.Namespaces {
			args = append(args, ns)
		}
	}
	q += ` GROUP BY namespace, pool, type, status`
	var out []driver.FacetCount
	err := t.Each(q, args, func(s sqlrow.Scanner) error {
		var c driver.FacetCount
		if err := s.Scan(&c.Namespace, &c.Pool, &c.Type, &c.Status, &c.Memories, &c.Versions, &c.Embedded); err != nil {
			return err
		}
		out = append(out, c)
		return nil
	})
	if err != nil {
		return nil, t.fail("count memories", err)
	}
	return out, nil
}

// CountEdges counts the edges between memories of namespaces
// (driver.Counter), looking each end up in the covering index
// memories_scope.
func (t *readTx) CountEdges(namespaces []string) (int, error) {
	q := `SELECT COUNT(*) FROM edges`
	var args []any
	if namespaces != nil {
		if len(namespaces) == 0 {
			return 0, nil
		}
		in := `IN (` + placeholders(len(namespaces)) + `)`
		q = `SELECT COUNT(*) FROM edges AS e
			JOIN memories AS a INDEXED BY memories_scope ON a.id = e.from_id
			JOIN memories AS b INDEXED BY memories_scope ON b.id = e.to_id
			WHERE a.namespace ` + in + ` AND b.namespace ` + in
		for range 2 {
			for _, ns := range namespaces {
				args = append(args, ns)
			}
		}
	}
	var n int
	if err := t.scanRow(q, args, &n); err != nil {
		return 0, t.fail("count edges", err)
	}
	return n, nil
}

// qAuditOf reads a page of one memory's audit entries through the index
// audit_memory.
var qAuditOf = `SELECT ` + sqlrow.AuditCols + ` FROM audit INDEXED BY audit_memory
	WHERE memory_id = ? AND seq > ? ORDER BY seq LIMIT ?`

// AuditOf calls fn for every audit entry about memory id, in ascending Seq
// order (driver.AuditMemoryReader).
func (t *readTx) AuditOf(id int64, fn func(driver.AuditEntry) error) error {
	return t.auditOfPages(qAuditOf, id, fn)
}

// auditOfPages calls fn for every entry q (arguments: memory id, the seq
// after which a page starts, its size) reads about memory id.
func (t *readTx) auditOfPages(q string, id int64, fn func(driver.AuditEntry) error) error {
	return sqlrow.AuditPages(pageSize, func(after int64) ([]driver.AuditEntry, error) {
		es, err := sqlrow.Collect(t, q, []any{id, after, pageSize}, sqlrow.ScanAudit)
		if err != nil {
			return nil, t.fail("read audit log", err)
		}
		return es, nil
	}, fn)
}

// qAuditBefore reads a page of the audit log backwards from a sequence
// number.
var qAuditBefore = `SELECT ` + sqlrow.AuditCols + ` FROM audit WHERE seq < ? ORDER BY seq DESC LIMIT ?`

// AuditBefore calls fn for every audit entry below before (0: every one),
// newest first (driver.AuditTailReader).
func (t *readTx) AuditBefore(before uint64, fn func(driver.AuditEntry) error) error {
	return sqlrow.AuditBackPages(before, pageSize, func(before int64, n int) ([]driver.AuditEntry, error) {
		es, err := sqlrow.Collect(t, qAuditBefore, []any{before, n}, sqlrow.ScanAudit)
		if err != nil {
			return nil, t.fail("read audit log", err)
		}
		return es, nil
	}, fn)
}

// qAuditBound reads a page of the batch entries that bind a memory,
// through audit_binds.
var qAuditBound = `SELECT ` + sqlrow.AuditCols + ` FROM audit
	WHERE seq IN (SELECT seq FROM audit_binds WHERE memory_id = ? AND seq > ?) ORDER BY seq LIMIT ?`

// AuditBound calls fn for every audit entry that binds memory id in a
// batch, in ascending Seq order (driver.AuditBindingReader).
func (t *readTx) AuditBound(id int64, fn func(driver.AuditEntry) error) error {
	return t.auditOfPages(qAuditBound, id, fn)
}

package postgres

import (
	"github.com/memos-go/memos/backends/internal/sqlrow"
	"github.com/memos-go/memos/core/driver"
)

var (
	_ driver.Counter           = (*readTx)(nil)
	_ driver.AuditMemoryReader = (*readTx)(nil)
	_ driver.AuditTailReader   = (*readTx)(nil)
)

// Count counts memories per facet (driver.Counter) with one aggregate,
// which the index memories_facets answers without the wide rows.
func (t *readTx) Count(opts driver.CountOptions) ([]driver.FacetCount, error) {
	q := `SELECT namespace, pool, type, status, count(*), sum(version),
		count(*) FILTER (WHERE status = 'active' AND embedding_model = $1 AND embedding_dim = $2)
		FROM memories`
	args := []any{opts.Model, opts.Dim}
	if opts.Namespaces != nil {
		if len(opts.Namespaces) == 0 {
			return nil, nil
		}
		q += ` WHERE namespace = ANY($3)`
		args = append(args, opts.Namespaces)
	}
	q += ` GROUP BY namespace, pool, type, status`
	var out []driver.FacetCount
	err := t.Each(q, args, func(s sqlrow.Scanner) error {
		var c driver.FacetCount
		var pool, typ, status string
		var n, versions, embedded int64
		if err := s.Scan(&c.Namespace, &pool, &typ, &status, &n, &versions, &embedded); err != nil {
			return err
		}
		c.Pool, c.Type, c.Status = driver.Pool(pool), driver.Type(typ), driver.Status(status)
		c.Memories, c.Versions, c.Embedded = int(n), int(versions), int(embedded)
		out = append(out, c)
		return nil
	})
	if err != nil {
		return nil, t.fail("count memories", err)
	}
	return out, nil
}

// CountEdges counts the edges between memories of namespaces
// (driver.Counter).
func (t *readTx) CountEdges(namespaces []string) (int, error) {
	q, args := `SELECT count(*) FROM edges`, []any(nil)
	if namespaces != nil {
		if len(namespaces) == 0 {
			return 0, nil
		}
		q = `SELECT count(*) FROM edges AS e
			JOIN memories AS a ON a.id = e.from_id
			JOIN memories AS b ON b.id = e.to_id
			WHERE a.namespace = ANY($1) AND b.namespace = ANY($1)`
		args = []any{namespaces}
	}
	var n int64
	if err := t.queryRow(q, args, &n); err != nil {
		return 0, t.fail("count edges", err)
	}
	return int(n), nil
}

// AuditOf calls fn for every audit entry about memory id, in ascending Seq
// order (driver.AuditMemoryReader), through the index audit_memory.
func (t *readTx) AuditOf(id int64, fn func(driver.AuditEntry) error) error {
	return sqlrow.AuditPages(pageSize, func(after int64) ([]driver.AuditEntry, error) {
		es, err := sqlrow.Collect(t, `SELECT `+sqlrow.AuditCols+` FROM audit
			WHERE memory_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`, []any{id, after, pageSize}, sqlrow.ScanAudit)
		if err != nil {
			return nil, t.fail("read audit log", err)
		}
		return es, nil
	}, fn)
}

// AuditBefore calls fn for every audit entry below before (0: every one),
// newest first (driver.AuditTailReader).
func (t *readTx) AuditBefore(before uint64, fn func(driver.AuditEntry) error) error {
	return sqlrow.AuditBackPages(before, pageSize, func(before int64, n int) ([]driver.AuditEntry, error) {
		es, err := sqlrow.Collect(t, `SELECT `+sqlrow.AuditCols+` FROM audit
			WHERE seq < $1 ORDER BY seq DESC LIMIT $2`, []any{before, n}, sqlrow.ScanAudit)
		if err != nil {
			return nil, t.fail("read audit log", err)
		}
		return es, nil
	}, fn)
}

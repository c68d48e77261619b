package sqlite

import (
	"github.com/memos-go/memos/backends/internal/sqlrow"
	"github.com/memos-go/memos/core/driver"
)

var _ driver.AuditBindingReader = (*readTx)(nil)

// qAuditBound reads a page of the batch entries that bind a memory,
// through audit_binds.
var qAuditBound = `SELECT ` + sqlrow.AuditCols + ` FROM audit
	WHERE seq IN (SELECT seq FROM audit_binds WHERE memory_id = ? AND seq > ?) ORDER BY seq LIMIT ?`

// AuditBound calls fn for every audit entry that binds memory id in a
// batch, in ascending Seq order (driver.AuditBindingReader).
func (t *readTx) AuditBound(id int64, fn func(driver.AuditEntry) error) error {
	return t.AuditWith(qAuditBound, []any{id}, fn)
}

package core

import (
	"context"

	"github.com/memos-go/memos/core/internal/migrate"
)

// MigrateReport says what Migrate copied and checked.
type MigrateReport = migrate.Report

// UnfinishedMigration reports whether b is a target that Migrate began to
// copy into and did not finish verifying (the copy was interrupted).
func UnfinishedMigration(ctx context.Context, b Backend) (bool, error) {
	return migrate.Unfinished(ctx, b)
}

// Migrate copies a store from src to dst, which must hold no memories and
// no audit log (a new store, perhaps opened once) and whose transactions
// must implement Importer: every memory with its id and all its
// versions (every namespace and status), every edge, the audit log and the
// engine's settings (embedding model, audit head). Ids forgotten in src stay
// unused in dst. Access statistics are copied as of the current version.
// Afterwards it reads both stores back and compares them; any difference is
// an error. progress, if not nil, is called after each batch.
//
// dst is marked as an unfinished copy before anything else is written to
// it (before the source is even listed) and unmarked once the copy is
// verified; Open refuses a marked store. When
// dst is marked, Migrate resumes the copy: memories already in dst (each
// batch commits with all its versions) are skipped, the rest copied, the
// whole compared again. It refuses to resume when src changed since the
// copy began; remove dst (see Remover) and start over then.
//
// Nothing may write to src meanwhile (the CLI holds it open for the copy).
func Migrate(ctx context.Context, src, dst Backend, progress func(done, total int)) (*MigrateReport, error) {
	// The store settings the engine keeps, which a copy needs.
	keys := []string{metaModel, metaDim, metaAuditHead, metaAuditSince}
	return migrate.Copy(ctx, src, dst, keys, progress)
}

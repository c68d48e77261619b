package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memos-go/memos/backends/internal/ranked"
	"github.com/memos-go/memos/backends/internal/sqlrow"
	"github.com/memos-go/memos/core/driver"
)

// openIndexes are indexes that Open creates when missing, outside the
// numbered migrations: they change no data and no reader depends on their
// absence, so a schema opened by an older memos keeps working (PostgreSQL
// maintains them like any index) and one opened by a newer memos gets them
// on its first open. Times are text in a fixed-width layout, compared and
// ordered bytewise (COLLATE "C") whatever the database's collation.
var openIndexes = []struct{ name, def string }{
	// Session expansion reads a session's members (driver.SessionReader).
	{"memories_session", `CREATE INDEX IF NOT EXISTS memories_session ON memories (namespace, session) WHERE session <> ''`},
	// A search as of a past time reads the memories changed since
	// (driver.UpdateReader).
	{"memories_updated", `CREATE INDEX IF NOT EXISTS memories_updated ON memories (namespace, updated_at COLLATE "C", id)`},
	// The bootstrap pack reads each (namespace, status, type) in rank
	// order (driver.RankReader, driver.CompareRank) and stops at its limit.
	{"memories_rank", `CREATE INDEX IF NOT EXISTS memories_rank ON memories (namespace, status, type,
		significance DESC, access_count DESC, last_accessed_at COLLATE "C" DESC NULLS LAST, id)`},
	// memos list reads each (namespace, status) newest first or most
	// significant first (driver.ListReader) and stops at the end of its
	// page. The zero time (NULL) is "", the earliest.
	{"memories_list", `CREATE INDEX IF NOT EXISTS memories_list ON memories (namespace, status, (` + listCreated + `), id)`},
	{"memories_list_sig", `CREATE INDEX IF NOT EXISTS memories_list_sig ON memories (namespace, status, significance, (` + listCreated + `), id)`},
	// Stats counts memories per facet (driver.Counter) from this index
	// alone (an index-only scan), not from the wide rows.
	{"memories_facets", `CREATE INDEX IF NOT EXISTS memories_facets ON memories (namespace, pool, type, status, version, embedding_model, embedding_dim)`},
	// A memory's audit entries (driver.AuditMemoryReader).
	{"audit_memory", `CREATE INDEX IF NOT EXISTS audit_memory ON audit (memory_id, seq)`},
}

// createOpenIndexes creates the openIndexes the schema lacks. It looks
// first, so that opening a store that has them takes no lock on memories.
func createOpenIndexes(ctx context.Context, tx pgx.Tx, schema string) error {
	for _, ix := range openIndexes {
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM pg_indexes WHERE schemaname = $1 AND indexname = $2`,
			schema, ix.name).Scan(&n); err != nil {
			return dbError(ctx, "read the indexes of schema "+schema, err)
		}
		if n > 0 {
			continue
		}
		if _, err := tx.Exec(ctx, ix.def); err != nil {
			return dbError(ctx, fmt.Sprintf("create index %s in schema %s", ix.name, schema), err)
		}
	}
	return nil
}

var (
	// qUpdated reads a page of the memories of one namespace changed after
	// a time, in (updated_at, id) order after a position, through
	// memories_updated.
	qUpdated = `SELECT ` + memoryCols + `, last_accessed_at, access_count FROM memories
		WHERE namespace = $1 AND (updated_at COLLATE "C", id) > ($2, $3)
		ORDER BY updated_at COLLATE "C", id LIMIT $4`
)

// UpdatedAfter calls fn with the current version of every memory of
// namespaces whose UpdatedAt is after at (see driver.UpdateReader), a page
// at a time.
func (t *readTx) UpdatedAfter(namespaces []string, at time.Time, fn func(*driver.Memory) error) error {
	return sqlrow.UpdatedAfter(t, qUpdated, pageSize, false, namespaces, at, nil, fn)
}

// Ranked calls fn with the current version of every memory that matches
// f, in rank order (see driver.RankReader), a page at a time, each page
// seeking past the last memory of the one before (ranked.Walk). PostgreSQL
// does not merge ordered scans of a UNION ALL, so each page reads the first
// memories of each (namespace, status, type) in its range through
// memories_rank, as many as the page holds, and sorts those few.
func (t *readTx) Ranked(f driver.Filter, fn func(*driver.Memory) error) error {
	groups, err := ranked.Groups(f)
	if err != nil || len(groups) == 0 || (f.Pools != nil && len(f.Pools) == 0) {
		return err
	}
	var ns, st, ty []string
	for _, g := range groups {
		ns, st, ty = append(ns, g.Namespace), append(st, string(g.Status)), append(ty, string(g.Type))
	}
	qs := &qRanked
	args := []any{ns, st, ty}
	if f.Pools != nil {
		qs = &qRankedPools
		args = append(args, sqlrow.Strings(f.Pools))
	}
	return ranked.Walk(func(r ranked.Range, k ranked.Key, limit int) ([]ranked.Row, error) {
		a := append(append(args[:len(args):len(args)], r.Args(k)...), limit)
		page, err := sqlrow.Collect(t, qs[r], a, func(rows sqlrow.Scanner) (ranked.Row, error) {
			var accessed *string
			m, err := sqlrow.ScanMemory(ranked.WithKey(rows, &accessed))
			return ranked.Row{Memory: m, LastAccessed: accessed}, err
		})
		if err != nil {
			return nil, t.fail("memories in rank order", err)
		}
		return page, nil
	}, fn)
}

// rankedQuery returns the query of a page of Ranked in the range r of the
// rank order: $1, $2, $3 are the groups' namespaces, statuses and types,
// then the pools when pools is set, then r's values (ranked.Range.Args),
// then how many to read. Each group's part seeks to r's start in
// memories_rank; the last column is the stored last_accessed_at, the
// page's key (ranked.Key).
func rankedQuery(pools bool, r ranked.Range) string {
	const order = `significance DESC, access_count DESC, last_accessed_at COLLATE "C" DESC NULLS LAST, id`
	poolCond, n := "", 4
	if pools {
		poolCond, n = " AND pool = ANY($4)", 5
	}
	where := r.Where(func(c ranked.Column) string {
		if c == ranked.LastAccessed {
			return c.Name() + ` COLLATE "C"` // the order memories_rank keeps
		}
		return c.Name()
	}, func() string {
		n++
		return fmt.Sprintf("$%d", n-1)
	})
	return fmt.Sprintf(`SELECT r.* FROM unnest($1::text[], $2::text[], $3::text[]) AS g (ns, st, ty)
		CROSS JOIN LATERAL (SELECT `+memoryCols+`, last_accessed_at, access_count, last_accessed_at AS rank_accessed FROM memories
			WHERE namespace = g.ns AND status = g.st AND type = g.ty%s%s
			ORDER BY `+order+` LIMIT $%d) AS r
		ORDER BY `+order+` LIMIT $%d`, poolCond, where, n, n)
}

// qRanked and qRankedPools are rankedQuery's queries without and with
// pools, by range.
var qRanked, qRankedPools = rankedQueries(false), rankedQueries(true)

func rankedQueries(pools bool) (qs [ranked.NRanges]string) {
	for r := range ranked.NRanges {
		qs[r] = rankedQuery(pools, r)
	}
	return qs
}

var (
	_ driver.SessionReader = (*readTx)(nil)
	_ driver.UpdateReader  = (*readTx)(nil)
	_ driver.RankReader    = (*readTx)(nil)
)

package postgres

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/memos-go/memos/core/driver"
)

// What a forget leaves (see the package documentation). A Delete removes
// every row of the memory, but PostgreSQL keeps a deleted row in its page as
// a dead row until VACUUM marks its space free, and never overwrites the
// space until new rows reuse it; the write-ahead log keeps what was written.
// So after every transaction that deleted, the backend runs VACUUM on the
// tables it deleted from (unless Config.NoVacuum), bounded by a minute,
// and Erasure reports what that did and what only the server, in time, or
// an operator can do.

// vacuumTables are the tables a Delete deletes from that hold content.
const vacuumTables = "memories, memory_versions, edges"

// vacuumWait bounds the VACUUM after a forget.
const vacuumWait = time.Minute

// erasure follows this DB's forgets, for Erasure.
type erasure struct {
	mu       sync.Mutex
	deletes  uint64 // transactions with a Delete committed
	xid      string // the newest one's transaction id
	vacuumed uint64 // how many of them the latest VACUUM that completed covers
	held     int64  // transactions that could still see their rows when that VACUUM began
	err      error  // why a VACUUM after the latest ones did not complete
}

// qHolders counts what keeps VACUUM from removing rows deleted by
// transaction $1: sessions of this database (or of none: a replica's
// hot_standby_feedback) whose snapshot or transaction is not newer than it,
// prepared transactions and replication slots as old; with the server's
// time, to check afterwards that VACUUM ran (see vacuumForgotten).
const qHolders = `SELECT clock_timestamp(),
	(SELECT count(*) FROM pg_stat_activity
		WHERE pid <> pg_backend_pid() AND (datname = current_database() OR datname IS NULL)
		AND greatest(age(backend_xmin), age(backend_xid)) >= age($1::text::xid8::xid))
	+ (SELECT count(*) FROM pg_prepared_xacts
		WHERE database = current_database() AND age(transaction) >= age($1::text::xid8::xid))
	+ (SELECT count(*) FROM pg_replication_slots
		WHERE (database = current_database() OR database IS NULL) AND age(xmin) >= age($1::text::xid8::xid))`

// forgot follows a committed transaction xid that deleted memories: it
// records it and, unless Config.NoVacuum, vacuums the tables it deleted
// from. Best effort: the forget has committed; Erasure reports the outcome.
func (d *DB) forgot(ctx context.Context, xid string) {
	e := &d.erasure
	e.mu.Lock()
	e.deletes++
	n := e.deletes
	if xid != "" {
		e.xid = xid
	}
	xid = e.xid
	e.mu.Unlock()
	if !d.vacuum {
		return
	}
	held, err := d.vacuumForgotten(ctx, xid)
	e.mu.Lock()
	defer e.mu.Unlock()
	if err != nil {
		e.err = err
		slog.Warn("postgres: the VACUUM after a forget did not complete; the deleted rows stay in the tables until a VACUUM of memories, memory_versions and edges (autovacuum or yours) runs", "schema", d.schema, "err", err)
		return
	}
	if n >= e.vacuumed {
		e.vacuumed, e.held, e.err = n, held, nil
	}
}

// vacuumForgotten runs VACUUM on vacuumTables and returns how many
// transactions could still see the rows that transaction xid (and every
// earlier one) deleted when it began: VACUUM leaves those rows. It checks
// that VACUUM processed every table (it skips, with a mere warning, a
// table the role may not vacuum).
func (d *DB) vacuumForgotten(ctx context.Context, xid string) (held int64, err error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), vacuumWait)
	defer cancel()
	var began time.Time
	if err := d.pool.QueryRow(ctx, qHolders, xid).Scan(&began, &held); err != nil {
		return 0, dbError(ctx, "look for transactions older than the forget", err)
	}
	if _, err := d.pool.Exec(ctx, `VACUUM `+vacuumTables); err != nil {
		return 0, dbError(ctx, "VACUUM "+vacuumTables, err)
	}
	var n int
	err = d.pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_user_tables
		WHERE relid IN ('memories'::regclass, 'memory_versions'::regclass, 'edges'::regclass) AND last_vacuum >= $1`, began).Scan(&n)
	if err != nil {
		return 0, dbError(ctx, "check the VACUUM", err)
	}
	if n != 3 {
		return 0, fmt.Errorf("VACUUM %s left %d of the 3 tables unvacuumed (is the role not their owner, or are statistics off?)", vacuumTables, 3-n)
	}
	return held, nil
}

// Erasure says what the forgets of this DB left of the deleted content
// (see driver.ErasureReporter). Some of it is always out of the backend's
// reach: PostgreSQL keeps the bytes in freed space and in its write-ahead
// log.
func (d *DB) Erasure(ctx context.Context) (driver.Erasure, error) {
	if err := d.enter("erasure"); err != nil {
		return driver.Erasure{}, err
	}
	defer d.leave()
	e := &d.erasure
	e.mu.Lock()
	deletes, vacuumed, held, verr := e.deletes, e.vacuumed, e.held, e.err
	e.mu.Unlock()
	const tables = "memories, memory_versions and edges"
	var r driver.Erasure
	switch {
	case !d.vacuum:
		r.Pending = append(r.Pending, "no VACUUM ran after the forget (no_vacuum is set): the deleted rows stay in "+tables+" as dead rows, readable to anyone who reads the files, until autovacuum or your VACUUM of those tables removes them")
	case vacuumed < deletes && verr == nil:
		r.Pending = append(r.Pending, "the VACUUM of "+tables+" after the forget has not finished: until it has, the deleted rows stay in those tables as dead rows")
	case vacuumed < deletes:
		r.Pending = append(r.Pending, fmt.Sprintf("the VACUUM of %s after the forget did not complete (%v): the deleted rows stay in those tables as dead rows until autovacuum or your VACUUM of them removes them", tables, verr))
	case held > 0:
		r.Done = append(r.Done, "VACUUM of "+tables+" ran after the forget")
		r.Pending = append(r.Pending, fmt.Sprintf("%d transaction(s) that began before the forget (or replication slots, prepared transactions) could still see the deleted rows when VACUUM ran, so it left them as dead rows: the next VACUUM (autovacuum, or the next forget's) removes them once those end", held))
	default:
		r.Done = append(r.Done, "VACUUM of "+tables+" ran after the forget: it pruned the deleted rows, which no transaction could see any more, and marked their space free for reuse")
	}
	r.OutOfReach = append(r.OutOfReach,
		"PostgreSQL does not overwrite freed space: the deleted rows' bytes stay in the files of "+tables+" and of their indexes (the keyword index keeps the stems of the words) until new rows reuse the space; VACUUM FULL (or pg_repack) of those tables rewrites their files without them (VACUUM FULL locks the tables while it runs)",
		"the server's write-ahead log (pg_wal) keeps what was written until its segments are recycled after later checkpoints; WAL archives, replicas, base backups and dumps made before the forget keep their copies until they are expired")
	return r, nil
}

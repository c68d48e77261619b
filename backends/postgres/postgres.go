package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memos-go/memos/backends/internal/guard"
	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/text"
)

// Name is the name the backend registers under.
const Name = "postgres"

func init() {
	driver.RegisterBackend(Name, driver.NewBackendDriver(Name, "", Open))
}

// DefaultSchema is the PostgreSQL schema the store's tables live in when
// Config.Schema is empty.
const DefaultSchema = "memos"

// Config configures the postgres backend. Every field may be left zero, in
// which case the connection comes from libpq's environment variables
// (PGHOST, PGPORT, PGDATABASE, PGUSER, PGPASSWORD, ...).
type Config struct {
	// DSN is a PostgreSQL connection string, as a URL
	// (postgres://user:pass@host:5432/db?sslmode=require) or in key=value
	// form; pool settings such as pool_max_conns may be appended.
	DSN string `koanf:"dsn"`
	// Schema is the PostgreSQL schema holding the store's tables (default
	// "memos"); it is created when missing. Several stores can share one
	// database under different schemas.
	Schema string `koanf:"schema"`
	// MaxConns bounds the connection pool (default pgxpool's: 4, or the
	// number of CPUs when larger).
	MaxConns int `koanf:"max_conns"`
	// NoVacuum skips the VACUUM that follows every forget (see the package
	// documentation), e.g. where an operator vacuums on a schedule.
	NoVacuum bool `koanf:"no_vacuum"`
	// PollInterval is how often WaitChange reads the change sequence itself,
	// besides waking on LISTEN/NOTIFY (default 10s): the bound on how long
	// an engine's vector index trails another process's write when a
	// notification is lost while the listening connection reconnects.
	PollInterval time.Duration `koanf:"poll_interval"`
	// KeywordPruneRows bounds the candidates a natural-language keyword
	// search (an OR of terms) evaluates, as sqlite's option of that name
	// does (see search.go): 0 is text.DefaultPruneRows; -1 evaluates every
	// match.
	KeywordPruneRows int `koanf:"keyword_prune_rows"`
}

// DefaultPollInterval is Config.PollInterval's default.
const DefaultPollInterval = 10 * time.Second

// DB is an open postgres store. It implements driver.Backend and is safe for
// concurrent use by many goroutines and, through the database, by many
// processes on many hosts.
type DB struct {
	pool    *pgxpool.Pool
	schema  string
	channel string // LISTEN/NOTIFY channel of the store
	vacuum  bool
	poll    time.Duration // WaitChange's own reads of the sequence

	lis *listener
	// pgvector is the version of the pgvector extension installed in the
	// database ("" when it is not), detected at Open. memos does not use it
	// yet; see the README's scaling notes.
	pgvector string
	// blockSize is the server's page size (block_size), which sizes the
	// rows of blobs (see blob.go).
	blockSize int

	guard guard.Guard // Close waits for View, Update and searches in progress
	// closing is closed when Close starts, so that a WaitChange in
	// progress (an engine's follower, which may wait for hours) returns
	// instead of holding Close up.
	closing   chan struct{}
	closeOnce sync.Once

	// candidates counts keyword candidates fetched and matched, for
	// BackendStats.
	candidates, matched atomic.Int64
	// pruneRows is Config.KeywordPruneRows (-1: off); pruned counts the
	// two-phase searches whose result was proved exact ([0]) or is an
	// approximation ([1]), for BackendStats.
	pruneRows int
	pruned    [2]atomic.Int64
	dfs       dfCache // document frequencies of the current store state

	// grown counts the memories this process inserted since it last ran
	// ANALYZE (see afterBulk).
	grown    atomic.Int64
	analyzes atomic.Int64
	// unmerged counts the memory rows this process wrote since it last
	// merged the keyword index's pending list (see afterBulk).
	unmerged atomic.Int64

	erasure erasure // what the forgets left, see erase.go
}

var (
	_ driver.Backend         = (*DB)(nil)
	_ driver.ErasureReporter = (*DB)(nil)
	_ driver.Tx              = (*writeTx)(nil)
	_ driver.AuditReader     = (*readTx)(nil)
	_ driver.Importer        = (*writeTx)(nil)
	_ driver.MultiGetter     = (*readTx)(nil)
	_ driver.MultiEdgeReader = (*readTx)(nil)
	_ driver.ChangeWaiter    = (*DB)(nil)
	_ driver.BackendStater   = (*DB)(nil)
)

var schemaRE = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// Open connects to the database, creates or migrates the store's schema and
// starts listening for other processes' changes. Open waits for the
// database as long as ctx allows; an unreachable server is
// driver.ErrUnavailable.
func Open(ctx context.Context, cfg Config) (*DB, error) {
	if cfg.Schema == "" {
		cfg.Schema = DefaultSchema
	}
	if !schemaRE.MatchString(cfg.Schema) {
		return nil, driver.Invalidf("postgres: schema %q is not a plain lower-case identifier (letters, digits, _; at most 63)", cfg.Schema)
	}
	if cfg.PollInterval < 0 {
		return nil, driver.Invalidf("postgres: poll_interval %v is negative", cfg.PollInterval)
	}
	if cfg.PollInterval == 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	pruneRows, err := text.PruneRows(cfg.KeywordPruneRows)
	if err != nil {
		return nil, driver.Invalidf("postgres: %v", err)
	}
	if cfg.MaxConns < 0 {
		return nil, driver.Invalidf("postgres: max_conns %d is negative", cfg.MaxConns)
	}
	pc, err := pgxpool.ParseConfig(cfg.DSN)
	if err != nil {
		return nil, driver.Invalidf("postgres: dsn: %v (want postgres://user:password@host:5432/database or key=value pairs)", redact(err))
	}
	if cfg.MaxConns > 0 {
		pc.MaxConns = int32(cfg.MaxConns)
	}
	pc.ConnConfig.RuntimeParams["search_path"] = cfg.Schema
	pc.ConnConfig.RuntimeParams["application_name"] = "memos"
	// A connection that the server dropped (a restart) is noticed when it is
	// next used; checking idle ones before use makes the first operation
	// after a restart succeed instead of failing on a dead socket.
	pc.MaxConnIdleTime = time.Minute
	pc.HealthCheckPeriod = 5 * time.Second
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", dbError(ctx, "connect", err))
	}
	d := &DB{pool: pool, schema: cfg.Schema, vacuum: !cfg.NoVacuum, poll: cfg.PollInterval, pruneRows: pruneRows,
		channel: "memos_" + cfg.Schema, guard: guard.Guard{Backend: Name, Store: "schema " + cfg.Schema},
		closing: make(chan struct{})}
	if err := d.init(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	// Best effort: a role that cannot read the catalog just reports none.
	_ = pool.QueryRow(ctx, `SELECT coalesce((SELECT extversion FROM pg_extension WHERE extname = 'vector'), '')`).Scan(&d.pgvector)
	var bs string
	if err := pool.QueryRow(ctx, `SHOW block_size`).Scan(&bs); err == nil {
		d.blockSize, _ = strconv.Atoi(bs)
	}
	if d.blockSize < 1024 { // not read: PostgreSQL's default (pages are never smaller)
		d.blockSize = 8192
	}
	d.lis = newListener(pool, d.channel)
	return d, nil
}

func (d *DB) init(ctx context.Context) error {
	tx, err := d.pool.BeginTx(ctx, pgx.TxOptions{})
	if err != nil {
		return fmt.Errorf("postgres: %w", dbError(ctx, "connect", err))
	}
	defer tx.Rollback(context.Background())
	if err := migrate(ctx, tx, d.schema); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	if err := createOpenIndexes(ctx, tx, d.schema); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("postgres: %w", dbError(ctx, "initialise schema "+d.schema, err))
	}
	return nil
}

// redact keeps a password out of a DSN parse error.
func redact(err error) error { return errors.New(pwRE.ReplaceAllString(err.Error(), "${1}xxxxx@")) }

var pwRE = regexp.MustCompile(`(://[^:/@]*:)[^@]*@`)

// Schema returns the PostgreSQL schema that holds the store.
func (d *DB) Schema() string { return d.schema }

func (d *DB) enter(op string) error { return d.guard.Enter(op) }

func (d *DB) leave() { d.guard.Leave() }

// View runs fn in a read-only REPEATABLE READ transaction: every read sees
// one snapshot of the store. Views never wait for writers.
func (d *DB) View(ctx context.Context, fn func(tx driver.ReadTx) error) error {
	return d.guard.Run(ctx, "view", func() error { return d.view(ctx, fn) })
}

func (d *DB) view(ctx context.Context, fn func(tx driver.ReadTx) error) error {
	conn, err := d.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("postgres: %w", dbError(ctx, "begin read transaction", err))
	}
	// The BEGIN goes with the first statement (see readTx.query): a View
	// costs one round trip more than its statements, not two.
	t := &readTx{ctx: ctx, tx: conn, begin: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"}
	t.bindReads()
	defer func() {
		t.end()
		if t.begin == "" {
			// A connection left inside a transaction (the rollback
			// failed) is closed by Release, not reused.
			_, _ = conn.Exec(context.Background(), "ROLLBACK")
		}
		conn.Release()
	}()
	return fn(t)
}

// maxAttempts bounds how often Update runs fn when the database reports a
// serialization failure or a deadlock.
const maxAttempts = 10

// Update runs fn in a READ COMMITTED transaction that first locks the store
// row: writers, in this and every other process, run one at a time, like
// SQLite's writers, so ids, versions and change sequence numbers are
// allocated without gaps and in commit order (see the package
// documentation). A serialization failure or deadlock reported by the
// database rolls the transaction back and runs fn again (up to 10 times),
// so fn must not have effects outside the transaction.
func (d *DB) Update(ctx context.Context, fn func(tx driver.Tx) error) error {
	return d.guard.Run(ctx, "update", func() error {
		for attempt := 1; ; attempt++ {
			t, err := d.update(ctx, fn)
			if err != nil && retryable(err) && attempt < maxAttempts {
				time.Sleep(time.Duration(attempt) * 5 * time.Millisecond)
				if err := ctx.Err(); err != nil {
					return fmt.Errorf("postgres: update: %w", err)
				}
				continue
			}
			if err != nil {
				return err
			}
			if t.deleted {
				d.forgot(ctx, t.xid)
			}
			d.afterBulk(ctx, t.inserted, t.rewritten, t.st.docs)
			return nil
		}
	})
}

func (d *DB) update(ctx context.Context, fn func(tx driver.Tx) error) (*writeTx, error) {
	ptx, err := d.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", dbError(ctx, "begin write transaction", err))
	}
	t := &writeTx{readTx: readTx{ctx: ctx, tx: ptx}, channel: d.channel}
	t.bindReads()
	defer func() {
		t.end()
		ptx.Rollback(context.Background()) // a no-op after Commit; also when fn panics
	}()
	err = ptx.QueryRow(ctx, `SELECT seq, last_id, docs, tokens FROM store FOR UPDATE`).
		Scan(&t.st.seq, &t.st.lastID, &t.st.docs, &t.st.tokens)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", dbError(ctx, "lock the store", err))
	}
	t.base = t.st
	if err := fn(t); err != nil {
		return nil, err
	}
	if err := t.flush(); err != nil {
		return nil, fmt.Errorf("postgres: %w", dbError(ctx, "commit", err))
	}
	if err := ptx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("postgres: %w", dbError(ctx, "commit", err))
	}
	return t, nil
}

// bulkRows is the number of memory rows written (inserted, or rewritten
// by an update or by access statistics) after which this process merges
// the keyword index's pending list.
const bulkRows = 256

// afterBulk keeps keyword search fast after writes. Every row a write
// inserts or rewrites puts its terms in the GIN pending list (an update
// of memories is never HOT: memories_rank indexes the access statistics),
// and every keyword search reads the whole list until it is merged into
// the index, which PostgreSQL itself does only when it overflows
// gin_pending_list_limit (1 MiB, some 7,000 rows) or autovacuum runs. So
// once this process has written bulkRows rows since it last merged, it
// merges: the access statistics that searches write (a row per memory
// found, a batch a second, on every host) otherwise kept the list near
// full, and a search on 2,000 memories read 5,000 pending rows. Once this
// process has inserted more than a tenth of the store (at least 1,000
// memories) since it last did, it runs ANALYZE: without fresh statistics
// after a bulk load the planner estimates the keyword index to be useless
// and scans the table for every search until autovacuum's next round (40
// ms instead of 0.2 ms per term at 20k memories). Both are best effort:
// the write has committed.
func (d *DB) afterBulk(ctx context.Context, added, rewritten, docs int64) {
	if added+rewritten <= 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if n := d.unmerged.Add(added + rewritten); n >= bulkRows && d.unmerged.CompareAndSwap(n, 0) {
		if _, err := d.pool.Exec(ctx, `SELECT gin_clean_pending_list('memories_terms'::regclass)`); err != nil {
			slog.Warn("postgres: merging the keyword index's pending list failed", "schema", d.schema, "err", err)
		}
	}
	if added <= 0 {
		return
	}
	if n := d.grown.Add(added); n < max(1000, docs/10) {
		return
	}
	d.grown.Store(0)
	if _, err := d.pool.Exec(ctx, `ANALYZE memories`); err != nil {
		slog.Warn("postgres: analyze after a bulk insert failed", "schema", d.schema, "err", err)
		return
	}
	d.analyzes.Add(1)
}

// Close waits for the operations in progress (a WaitChange returns at
// once, with driver.ErrClosed), then closes the connections.
// Later calls return driver.ErrClosed.
func (d *DB) Close() error {
	d.closeOnce.Do(func() { close(d.closing) })
	if err := d.guard.Close(); err != nil {
		return err
	}
	d.lis.close()
	d.pool.Close()
	return nil
}

// BackendStats reports the pool and the keyword candidates fetched so far.
func (d *DB) BackendStats(ctx context.Context) (map[string]any, error) {
	if err := d.enter("stats"); err != nil {
		return nil, err
	}
	defer d.leave()
	var size int64
	err := d.pool.QueryRow(ctx, `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = $1 AND c.relkind IN ('r', 'm')`, d.schema).Scan(&size)
	if err != nil {
		return nil, dbError(ctx, "read the schema size", err)
	}
	st := d.pool.Stat()
	return map[string]any{
		"schema":             d.schema,
		"size_bytes":         size,
		"pool_conns":         st.TotalConns(),
		"keyword_candidates": d.candidates.Load(),
		"keyword_matches":    d.matched.Load(),
		"keyword_pruned":     d.pruned[0].Load() + d.pruned[1].Load(),
		"keyword_approx":     d.pruned[1].Load(),
	}, nil
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// Destroy drops the store's schema with everything in it, then closes the
// backend. memos bench uses it to remove the fresh store it made for a run;
// nothing else in memos calls it.
func (d *DB) Destroy(ctx context.Context) error {
	if err := d.enter("destroy"); err != nil {
		return err
	}
	_, err := d.pool.Exec(ctx, "DROP SCHEMA "+pgx.Identifier{d.schema}.Sanitize()+" CASCADE")
	d.leave()
	if err != nil {
		return errors.Join(fmt.Errorf("postgres: %w", dbError(ctx, "drop schema "+d.schema, err)), d.Close())
	}
	return d.Close()
}

package postgres_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memos-go/memos/backends/postgres"
	"github.com/memos-go/memos/backends/sqlite"
	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/core/bench/dataset"
	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/embedders/hash"
)

// coldOpenN is the store size of BenchmarkColdOpen: $MEMOS_BENCH_PG_N
// memories, 10,000 by default (the figure is at 100,000).
func coldOpenN(b *testing.B) int {
	n := 10_000
	if s := os.Getenv("MEMOS_BENCH_PG_N"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			b.Fatalf("MEMOS_BENCH_PG_N=%q is not a positive number of memories", s)
		}
		n = v
	}
	return n
}

// metaColdOpen marks a BenchmarkColdOpen store whose ingest completed.
const metaColdOpen = "bench.cold_open"

// BenchmarkColdOpen measures what a memos process pays to start serving a
// postgres store: opening the backend and the engine (which loads the
// vector index, exact, of every memory's 256-dimension hash embedding)
// and answering its first hybrid search. The store is the synthetic
// workload at $MEMOS_BENCH_PG_N memories (default 10,000), ingested through
// the engine once; it is kept in the schema bench_cold_open_<n> of
// MEMOS_TEST_PG_DSN's database (best a database of its own) and reused by
// later runs, so drop that schema to start over. Closing is not timed.
//
//	MEMOS_TEST_PG_DSN=... MEMOS_BENCH_PG_N=100000 go test -run '^$' -bench ColdOpen -benchtime 5x ./backends/postgres/
//
// Two ways to open: snapshot, from the vector snapshot kept in the store
// (written by an open and close before the timed ones), and changelog,
// without it (deleted before each open): every vector read from the
// change log. Each reports open-ms and first-query-ms per open besides
// ns/op. BenchmarkColdOpenSQLite is the same on sqlite, for comparison.
func BenchmarkColdOpen(b *testing.B) {
	ctx := context.Background()
	dsn := testDSN(b)
	cfg := postgres.Config{DSN: dsn, Schema: "bench_cold_open_" + strconv.Itoa(coldOpenN(b))}
	openDB := func() (driver.Backend, error) { return postgres.Open(ctx, cfg) }
	q := ingest(b, openDB, "")
	dropSnapshot := func() {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, `DELETE FROM `+pgx.Identifier{cfg.Schema, "blobs"}.Sanitize()); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("snapshot", func(b *testing.B) { coldOpens(b, openDB, "", nil, q) })
	b.Run("changelog", func(b *testing.B) { coldOpens(b, openDB, "", dropSnapshot, q) })
}

// BenchmarkColdOpenSQLite is BenchmarkColdOpen on sqlite with the snapshot
// file front-ends keep next to the store (path + ".vectors"). The store is
// kept in $MEMOS_BENCH_DIR (default the system's temporary directory) as
// cold-open-<n>.db; remove it to start over.
func BenchmarkColdOpenSQLite(b *testing.B) {
	ctx := context.Background()
	dir := os.Getenv("MEMOS_BENCH_DIR")
	if dir == "" {
		dir = os.TempDir()
	}
	path := filepath.Join(dir, "cold-open-"+strconv.Itoa(coldOpenN(b))+".db")
	openDB := func() (driver.Backend, error) { return sqlite.Open(ctx, sqlite.Config{Path: path}) }
	q := ingest(b, openDB, path+".vectors")
	coldOpens(b, openDB, path+".vectors", nil, q)
}

// coldOpen opens an engine over the backend openDB opens, with the vector
// snapshot file snap ("": none, or in the store).
func coldOpen(openDB func() (driver.Backend, error), snap string) (*core.Engine, error) {
	db, err := openDB()
	if err != nil {
		return nil, err
	}
	emb, err := hash.New(hash.Config{Dim: 256})
	if err != nil {
		return nil, errors.Join(err, db.Close())
	}
	e, err := core.Open(context.Background(), core.Options{Backend: db, Embedder: emb, EmbedCacheSize: -1, VectorSnapshot: snap,
		Govern: core.GovernConfig{Contradictions: core.ContradictOff}})
	if err != nil {
		return nil, errors.Join(err, db.Close())
	}
	return e, nil
}

// coldOpens times opens of the store and their first search for q, after
// an open and a close that leave a current snapshot; before, when not nil,
// runs before each open, untimed.
func coldOpens(b *testing.B, openDB func() (driver.Backend, error), snap string, before func(), q dataset.Query) {
	ctx := context.Background()
	e, err := coldOpen(openDB, snap)
	if err != nil {
		b.Fatal(err)
	}
	if err := e.Close(); err != nil {
		b.Fatal(err)
	}
	var openTime, queryTime time.Duration
	opens := 0
	for b.Loop() {
		if before != nil {
			b.StopTimer()
			before()
			b.StartTimer()
		}
		t0 := time.Now()
		e, err := coldOpen(openDB, snap)
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		h := e
		if q.Namespace != "" && q.Namespace != core.DefaultNamespace {
			if h, err = e.In(q.Namespace); err != nil {
				b.Fatal(err)
			}
		}
		res, err := h.Search(ctx, core.SearchRequest{Query: q.Text, Mode: core.ModeHybrid, Limit: 10})
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Hits) == 0 {
			b.Fatalf("the first search (%q) found nothing", q.Text)
		}
		openTime += t1.Sub(t0)
		queryTime += time.Since(t1)
		opens++
		b.StopTimer()
		if err := e.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(openTime.Microseconds())/1e3/float64(opens), "open-ms")
	b.ReportMetric(float64(queryTime.Microseconds())/1e3/float64(opens), "first-query-ms")
}

// ingest writes the synthetic workload's documents into the store openDB
// opens through an engine (with the snapshot file snap), unless an earlier
// run completed that, and returns the query to time.
func ingest(b *testing.B, openDB func() (driver.Backend, error), snap string) dataset.Query {
	ctx := context.Background()
	n := coldOpenN(b)
	ds, err := dataset.Synthetic(dataset.SyntheticOptions{Docs: n, Queries: 10, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	c := ds.Corpora[0]
	db, err := openDB()
	if err != nil {
		b.Fatal(err)
	}
	var done string
	var seq uint64
	err = db.View(ctx, func(tx driver.ReadTx) error {
		if seq, err = tx.Seq(); err != nil {
			return err
		}
		done, err = tx.Meta(metaColdOpen)
		if errors.Is(err, driver.ErrNotFound) {
			return nil
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	db.Close()
	if done == "complete" {
		return c.Queries[0]
	}
	if seq != 0 {
		b.Fatal("the benchmark's store holds an unfinished ingest: remove it and run again")
	}
	b.Logf("ingesting %d memories (kept for later runs)", len(c.Docs))
	e, err := coldOpen(openDB, snap)
	if err != nil {
		b.Fatal(err)
	}
	const batch = 500
	ins := make([]core.Input, 0, batch)
	for start := 0; start < len(c.Docs); start += batch {
		ins = ins[:0]
		for _, d := range c.Docs[start:min(start+batch, len(c.Docs))] {
			ins = append(ins, d.Input)
		}
		if _, err := e.RememberBatch(ctx, ins); err != nil {
			b.Fatal(err)
		}
	}
	if err := e.Backend().Update(ctx, func(tx driver.Tx) error { return tx.SetMeta(metaColdOpen, "complete") }); err != nil {
		b.Fatal(err)
	}
	if err := e.Close(); err != nil {
		b.Fatal(err)
	}
	return c.Queries[0]
}

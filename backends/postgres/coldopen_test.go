package postgres_test

import (
	"context"
	"errors"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/memos-go/memos/backends/postgres"
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
// It reports open-ms and first-query-ms per open besides ns/op.
func BenchmarkColdOpen(b *testing.B) {
	ctx := context.Background()
	dsn := testDSN(b)
	n := coldOpenN(b)
	cfg := postgres.Config{DSN: dsn, Schema: "bench_cold_open_" + strconv.Itoa(n)}
	ds, err := dataset.Synthetic(dataset.SyntheticOptions{Docs: n, Queries: 10, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	c := ds.Corpora[0]
	emb, err := hash.New(hash.Config{Dim: 256})
	if err != nil {
		b.Fatal(err)
	}
	open := func() (*core.Engine, error) {
		db, err := postgres.Open(ctx, cfg)
		if err != nil {
			return nil, err
		}
		e, err := core.Open(ctx, core.Options{Backend: db, Embedder: emb, EmbedCacheSize: -1,
			Govern: core.GovernConfig{Contradictions: core.ContradictOff}})
		if err != nil {
			return nil, errors.Join(err, db.Close())
		}
		return e, nil
	}
	ingest(b, cfg, open, c)

	q := c.Queries[0]
	var openTime, queryTime time.Duration
	opens := 0
	for b.Loop() {
		t0 := time.Now()
		e, err := open()
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

// ingest writes c's documents into the store of cfg through the engine
// open opens, unless an earlier run completed that.
func ingest(b *testing.B, cfg postgres.Config, open func() (*core.Engine, error), c dataset.Corpus) {
	ctx := context.Background()
	db, err := postgres.Open(ctx, cfg)
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
	if done == "complete" {
		db.Close()
		return
	}
	if seq != 0 {
		b.Fatalf("schema %s holds an unfinished ingest: drop it and run again", cfg.Schema)
	}
	b.Logf("ingesting %d memories into schema %s (kept for later runs)", len(c.Docs), cfg.Schema)
	e, err := open()
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
	if err := e.Close(); err != nil {
		b.Fatal(err)
	}
	if err := db.Update(ctx, func(tx driver.Tx) error { return tx.SetMeta(metaColdOpen, "complete") }); err != nil {
		b.Fatal(err)
	}
	db.Close()
}

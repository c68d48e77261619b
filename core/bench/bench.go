package bench

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/core/bench/dataset"
)

// Config says what to benchmark. The zero value of every field is usable:
// it benchmarks every registered backend with the hash embedder on a
// synthetic corpus of 10,000 memories.
type Config struct {
	// Backends names registered backends (default: DefaultBackends).
	// Each must have a path setting, which the benchmark points at a fresh
	// temporary directory, or, for a database backend, a schema setting,
	// which it sets to a fresh schema (and drops after the run when the
	// backend implements Destroyer).
	Backends []string
	// Embedders names registered embedders (default: "hash").
	Embedders []string
	// BackendConfigs and EmbedderConfigs hold settings by module name: values
	// as the driver's NewConfig returns them, decoded from the user's
	// configuration. A missing name gets the driver's zero config. A backend's
	// path is always replaced.
	BackendConfigs  map[string]any
	EmbedderConfigs map[string]any
	// Sizes are synthetic corpus sizes, in memories (default: 10,000 when
	// Datasets is empty, none otherwise).
	Sizes []int
	// Datasets are further workloads, e.g. from dataset.Load.
	Datasets []*dataset.Dataset
	// K lists the recall cutoffs (default: 10). nDCG is always at 10; data
	// sets may add cutoffs (BEIR: 100).
	K []int
	// Queries is the number of timed queries per search mode and data set,
	// and the size of the synthetic query sets (default 200). Labelled
	// queries are all scored, timed or not.
	Queries int
	// Warmup is how many untimed queries run first on each store, per mode
	// (default 20, at most the store's number of queries).
	Warmup int
	// Limit is the number of results a timed query asks for (default 10).
	Limit int
	// BatchSize is the number of memories per RememberBatch (default 500).
	BatchSize int
	// Seed makes the synthetic data and the shuffled query order.
	Seed int64
	// Dir is where temporary stores go ("" means os.TempDir()).
	Dir string
	// VectorIndexes names the vector indexes to measure (default: "exact").
	// Each store is ingested with the first; every other one is then built
	// from the store at an open of its own (timed: Result.IndexBuild), and
	// each is measured from a cold open of the closed store.
	VectorIndexes []string
	// VectorPrecision is the vector indexes' precision ("" means "float32").
	VectorPrecision string
	// Search holds the ranking settings; access tracking is always off, so
	// that queries do not write.
	Search core.SearchConfig
	// Reranker names a registered reranker every search uses ("": none),
	// opened with RerankerConfig (nil: the driver's zero config). It is
	// asked once before the first run, which fails when it does not answer;
	// each Result counts its calls and failures.
	Reranker       string
	RerankerConfig any
	// Progress, if not nil, receives progress bars.
	Progress io.Writer
}

// DefaultBackends lists every registered backend, the reference backend
// (sqlite) first, so that the others are compared with it.
func DefaultBackends() []string {
	names := core.BackendNames()
	if i := slices.Index(names, "sqlite"); i > 0 {
		names = append(append([]string{"sqlite"}, names[:i]...), names[i+1:]...)
	}
	return names
}

// DefaultSize is the synthetic corpus size when neither sizes nor data sets
// are given.
const DefaultSize = 10_000

func (c Config) withDefaults() (Config, error) {
	if len(c.Backends) == 0 {
		c.Backends = DefaultBackends()
	}
	if len(c.Embedders) == 0 {
		c.Embedders = []string{"hash"}
	}
	if len(c.Sizes) == 0 && len(c.Datasets) == 0 {
		c.Sizes = []int{DefaultSize}
	}
	if len(c.K) == 0 {
		c.K = []int{10}
	}
	if c.Queries == 0 {
		c.Queries = 200
	}
	if c.Warmup == 0 {
		c.Warmup = 20
	}
	if c.Limit == 0 {
		c.Limit = 10
	}
	if c.BatchSize == 0 {
		c.BatchSize = 500
	}
	if len(c.VectorIndexes) == 0 {
		c.VectorIndexes = []string{"exact"}
	}
	for _, name := range c.VectorIndexes {
		if err := core.ValidateVectorIndex(name); err != nil {
			return c, fmt.Errorf("bench: %w", err)
		}
	}
	if c.VectorPrecision == "" {
		c.VectorPrecision = "float32"
	}
	if err := core.ValidateVectorPrecision(c.VectorPrecision); err != nil {
		return c, fmt.Errorf("bench: %w", err)
	}
	c.Search.DisableAccessTracking = true
	if c.Reranker != "" {
		// Every search asks the reranker, so that a failure shows in its
		// counts rather than as searches that skipped it.
		c.Search.RerankPauseAfter = -1
	}
	switch {
	case len(c.Backends) == 0:
		return c, core.Invalidf("bench: no backend is registered; import one (e.g. _ \"github.com/memos-go/memos/backends/sqlite\")")
	case c.Queries < 1 || c.Warmup < 0 || c.Limit < 1 || c.Limit > 1000 || c.BatchSize < 1:
		return c, core.Invalidf("bench: queries (%d) and batch size (%d) must be positive, warm-up (%d) not negative, limit (%d) within 1–1000",
			c.Queries, c.BatchSize, c.Warmup, c.Limit)
	}
	for _, k := range c.K {
		if k < 1 || k > 1000 {
			return c, core.Invalidf("bench: recall cutoff k=%d is outside 1–1000", k)
		}
	}
	for _, n := range c.Sizes {
		if n < 1 {
			return c, core.Invalidf("bench: synthetic size %d; want at least 1 memory", n)
		}
	}
	for i, d := range c.Datasets {
		if d == nil || len(d.Corpora) == 0 {
			return c, core.Invalidf("bench: data set %d is empty", i)
		}
	}
	for _, names := range [][]string{c.Backends, c.Embedders, c.VectorIndexes} {
		for i, n := range names {
			if slices.Contains(names[:i], n) {
				return c, core.Invalidf("bench: %q is listed twice", n)
			}
		}
	}
	return c, nil
}

// Run benchmarks every backend with every embedder on every data set: the
// synthetic sizes first, then Datasets. For each combination it ingests
// each corpus into a fresh store in a new temporary directory (removed
// afterwards) through RememberBatch, closes it and measures its files,
// reopens it cold and times the first query, then times Queries queries per
// search mode after Warmup untimed ones, and scores every labelled query.
// Every backend and embedder sees the same data and the same shuffled query
// order. Runs are sequential, so figures do not disturb each other.
//
// A run that fails does not cost the others: its error, naming the data
// set, backend and embedder, is kept in Report.Failures, the remaining runs
// go on, and Run returns the report with an error that counts the
// failures. Run honours ctx between and within phases; when ctx ends it
// returns what finished so far with ctx's error. Settings that are wrong
// for every run (an unknown backend, a bad cutoff) fail before any run,
// with a nil report.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	r := &runner{cfg: cfg, backends: map[string]core.BackendDriver{}}
	for _, name := range cfg.Backends {
		d, err := core.LookupBackend(name)
		if err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		if _, err := withPath(r.backendConfig(name, d), "x"); err != nil {
			return nil, fmt.Errorf("bench: backend %s: %w", name, err)
		}
		r.backends[name] = d
	}
	embs, err := openEmbedders(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer closeEmbedders(embs)
	if cfg.Reranker != "" {
		rr, err := OpenReranker(ctx, cfg.Reranker, cfg.RerankerConfig, cfg.Search.RerankTimeout)
		if err != nil {
			return nil, err
		}
		defer rr.Shutdown()
		r.reranker = rr
	}

	rep := &Report{Machine: CurrentMachine(), Started: time.Now().UTC(), Settings: Settings{
		Backends: cfg.Backends, Embedders: cfg.Embedders, K: cfg.K, Queries: cfg.Queries, Warmup: cfg.Warmup,
		Limit: cfg.Limit, BatchSize: cfg.BatchSize, Seed: cfg.Seed, VectorIndexes: cfg.VectorIndexes, VectorPrecision: cfg.VectorPrecision, Search: core.NewSearchSettings(cfg.Search),
		Reranker: cfg.Reranker,
	}}
	start := time.Now()
	sets := make([]*dataset.Dataset, 0, len(cfg.Sizes)+len(cfg.Datasets))
	for _, n := range cfg.Sizes {
		d, err := dataset.Synthetic(dataset.SyntheticOptions{Docs: n, Queries: cfg.Queries, Seed: cfg.Seed})
		if err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		sets = append(sets, d)
	}
	sets = append(sets, cfg.Datasets...)
	for _, d := range sets {
		rep.Settings.Datasets = append(rep.Settings.Datasets, fmt.Sprintf("%s (%d docs)", d.Name, d.Docs()))
		for _, n := range d.Notes {
			if !slices.Contains(rep.Notes, n) {
				rep.Notes = append(rep.Notes, n)
			}
		}
	}
	var failed []error
	for _, d := range sets {
		p := plan(d, cfg.Queries, cfg.Seed)
		for _, en := range cfg.Embedders {
			for _, bn := range cfg.Backends {
				if err := ctx.Err(); err != nil {
					return rep.finish(start), err
				}
				runs, err := r.run(ctx, d, p, bn, en, embs[en])
				if err != nil {
					err = fmt.Errorf("bench %s (%d docs) on %s with %s: %w", d.Name, d.Docs(), bn, en, err)
					if ctx.Err() != nil {
						return rep.finish(start), err
					}
					failed = append(failed, err)
					rep.Failures = append(rep.Failures, Failure{Dataset: d.Name, Docs: d.Docs(), Backend: bn, Embedder: en, Error: err.Error()})
					continue
				}
				rep.Results = append(rep.Results, runs...)
			}
		}
	}
	rep.finish(start)
	if len(failed) > 0 {
		return rep, fmt.Errorf("%d of %d benchmark runs failed, the first: %w",
			len(failed), len(failed)+len(rep.Results), failed[0])
	}
	return rep, nil
}

// finish sets the figures computed over the finished runs.
func (rep *Report) finish(start time.Time) *Report {
	rep.Comparisons = compare(rep.Results)
	rep.Elapsed = core.Duration(time.Since(start))
	return rep
}

// EmbedderError reports an embedder that would not open with its settings
// (Config.EmbedderConfigs), so that a front-end can say where they come from.
type EmbedderError struct {
	Name string
	Err  error
}

func (e *EmbedderError) Error() string {
	return fmt.Sprintf("bench: open embedder %s: %v", e.Name, e.Err)
}

func (e *EmbedderError) Unwrap() error { return e.Err }

// sharedEmbedder lends an embedder to one engine after another: it hides
// Close, which the engine would otherwise call when it closes.
type sharedEmbedder struct{ core.Embedder }

func openEmbedders(ctx context.Context, cfg Config) (map[string]core.Embedder, error) {
	out := map[string]core.Embedder{}
	for _, name := range cfg.Embedders {
		d, err := core.LookupEmbedder(name)
		if err != nil {
			closeEmbedders(out)
			return nil, fmt.Errorf("bench: %w", err)
		}
		ec := cfg.EmbedderConfigs[name]
		if ec == nil {
			ec = d.NewConfig()
		}
		e, err := d.Open(ctx, ec)
		if err != nil {
			closeEmbedders(out)
			return nil, &EmbedderError{Name: name, Err: err}
		}
		out[name] = e
	}
	return out, nil
}

func closeEmbedders(embs map[string]core.Embedder) {
	for _, e := range embs {
		if c, ok := e.(io.Closer); ok {
			c.Close()
		}
	}
}

// queryPlan is the shuffled query order of one data set, shared by every
// backend and embedder.
type queryPlan struct {
	corpora []corpusPlan
}

type corpusPlan struct {
	order []int // every query of the corpus, shuffled
	timed []int // the queries timed here, in the same order
}

// plan shuffles all queries of d with seed and picks the first n of the
// shuffled list for timing.
func plan(d *dataset.Dataset, n int, seed int64) *queryPlan {
	type ref struct{ c, q int }
	var all []ref
	for ci := range d.Corpora {
		for qi := range d.Corpora[ci].Queries {
			all = append(all, ref{ci, qi})
		}
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0x71756572))
	for i := len(all) - 1; i > 0; i-- {
		j := int(rng.Uint64() % uint64(i+1))
		all[i], all[j] = all[j], all[i]
	}
	p := &queryPlan{corpora: make([]corpusPlan, len(d.Corpora))}
	for i, r := range all {
		cp := &p.corpora[r.c]
		cp.order = append(cp.order, r.q)
		if i < n {
			cp.timed = append(cp.timed, r.q)
		}
	}
	return p
}

type runner struct {
	cfg      Config
	backends map[string]core.BackendDriver
	reranker *CountingReranker // nil: no reranker
}

// rerankCounts is what the shared reranker has done so far (zero without one).
func (r *runner) rerankCounts() Rerank {
	if r.reranker == nil {
		return Rerank{}
	}
	return r.reranker.Counts()
}

func (r *runner) backendConfig(name string, d core.BackendDriver) any {
	if c := r.cfg.BackendConfigs[name]; c != nil {
		return c
	}
	return d.NewConfig()
}

// ks returns the recall cutoffs for d, ascending.
func (r *runner) ks(d *dataset.Dataset) []int {
	ks := slices.Clone(r.cfg.K)
	for _, k := range d.ExtraK {
		if !slices.Contains(ks, k) {
			ks = append(ks, k)
		}
	}
	slices.Sort(ks)
	return ks
}

// measure is what run gathers for one vector index.
type measure struct {
	run     *Result
	sc      *scorer
	samples map[core.Mode][]time.Duration
	packs   []time.Duration
	opens   []time.Duration
}

// run measures one backend with one embedder on one data set: one Result
// per vector index.
func (r *runner) run(ctx context.Context, d *dataset.Dataset, p *queryPlan, backend, embName string, emb core.Embedder) ([]*Result, error) {
	start := time.Now()
	info, err := emb.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("embedder info: %w", err)
	}
	scope := "process"
	if resetPeakRSS() {
		scope = "run"
	}
	measures := make([]*measure, len(r.cfg.VectorIndexes))
	for i, ix := range r.cfg.VectorIndexes {
		measures[i] = &measure{run: &Result{Dataset: d.Name, Docs: d.Docs(), Corpora: len(d.Corpora), Backend: backend, Embedder: embName,
			VectorIndex: ix, Model: info, Latency: map[core.Mode]*Latency{}, PeakRSSScope: scope},
			sc: newScorer(r.ks(d)), samples: map[core.Mode][]time.Duration{}}
	}
	dir, err := os.MkdirTemp(r.cfg.Dir, "memos-bench-*")
	if err != nil {
		return nil, fmt.Errorf("temporary directory: %w", err)
	}
	defer os.RemoveAll(dir)

	var ing Ingest
	prog := newProgress(r.cfg.Progress, fmt.Sprintf("%s · %s · %s", d.Name, backend, embName), d, p, len(measures))
	defer prog.done()
	for ci := range d.Corpora {
		c := &d.Corpora[ci]
		cdir := filepath.Join(dir, strconv.Itoa(ci))
		if err := os.Mkdir(cdir, 0o700); err != nil {
			return nil, err
		}
		st := &store{r: r, backend: backend, emb: sharedEmbedder{emb}, path: filepath.Join(cdir, storeName(r.backends[backend])), index: r.cfg.VectorIndexes[0]}
		w0 := writtenBytes()
		keys, err := st.ingest(ctx, c, &ing, prog)
		if w1 := writtenBytes(); w0 >= 0 && w1 >= w0 {
			ing.Written += w1 - w0
		}
		if err != nil {
			return nil, fmt.Errorf("corpus %s: ingest: %w", c.Name, err)
		}
		cp := &p.corpora[ci]
		for i, m := range measures {
			if err := r.measureIndex(ctx, st, i > 0, m, c, cp, keys, cdir, prog); err != nil {
				return nil, fmt.Errorf("corpus %s: %w", c.Name, err)
			}
		}
		if err := st.destroy(ctx); err != nil {
			return nil, fmt.Errorf("corpus %s: %w", c.Name, err)
		}
		if err := os.RemoveAll(cdir); err != nil {
			return nil, err
		}
		prog.corpusDone()
	}
	ing.Docs = d.Docs()
	if secs := ing.Total.D().Seconds(); secs > 0 {
		ing.PerSecond = float64(ing.Docs) / secs
	}
	peak := peakRSS()
	out := make([]*Result, len(measures))
	for i, m := range measures {
		out[i] = m.result(ing, peak, time.Since(start))
	}
	return out, nil
}

// measureIndex measures the corpus c, ingested into st, with m's vector
// index: it builds the index (unless it is the one st was ingested with),
// measures the store's disk usage, reopens it and runs the queries.
func (r *runner) measureIndex(ctx context.Context, st *store, build bool, m *measure, c *dataset.Corpus, cp *corpusPlan, keys map[int64]string, cdir string, prog *progress) error {
	run := m.run
	if build {
		st.index = run.VectorIndex
		took, err := st.build(ctx)
		if err != nil {
			return fmt.Errorf("build the %s index: %w", st.index, err)
		}
		run.IndexBuild += core.Duration(took)
	}
	size, alloc, err := st.diskUsage(ctx, cdir)
	if err != nil {
		return fmt.Errorf("disk usage: %w", err)
	}
	run.DiskBytes += size
	run.DiskAllocated += alloc
	before := r.rerankCounts()
	sample, err := st.open(ctx, c, cp)
	if err != nil {
		return fmt.Errorf("reopen with the %s index: %w", st.index, err)
	}
	run.Open.Samples = append(run.Open.Samples, sample)
	run.OpenRSS += sample.RSS
	m.opens = append(m.opens, (sample.Open + sample.FirstQuery).D())
	err = st.query(ctx, c, cp, keys, m.samples, &m.packs, m.sc, prog)
	if r.reranker != nil {
		after := r.rerankCounts()
		if run.Rerank == nil {
			run.Rerank = &Rerank{}
		}
		run.Rerank.Calls += after.Calls - before.Calls
		run.Rerank.Failed += after.Failed - before.Failed
	}
	if cerr := st.eng.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close: %w", cerr)
	}
	// Let the closed engine go, so that the next index's open RSS does not
	// count this one's memory freed as its own.
	st.eng, st.handles = nil, nil
	return err
}

// result completes m's Result with what the run measured across corpora.
func (m *measure) result(ing Ingest, peak int64, elapsed time.Duration) *Result {
	run := m.run
	run.Ingest = ing
	run.Open.Median = core.Duration(median(m.opens))
	if run.Docs > 0 {
		run.DiskPer100k = float64(run.DiskAllocated) * 1e5 / float64(run.Docs)
		run.OpenRSSPer100k = float64(run.OpenRSS) * 1e5 / float64(run.Docs)
	}
	for _, mode := range Modes {
		run.Latency[mode] = summarize(m.samples[mode])
	}
	if len(m.packs) > 0 {
		run.Pack = summarize(m.packs)
	}
	run.Quality = m.sc.result()
	run.PeakRSS = peak
	run.Elapsed = core.Duration(elapsed)
	return run
}

// storeName is the store's file or directory name inside its temporary
// directory.
func storeName(d core.BackendDriver) string {
	if d.DefaultPath != "" {
		return filepath.Base(d.DefaultPath)
	}
	return "store"
}

// store is one corpus's store during a run.
type store struct {
	r       *runner
	backend string
	emb     core.Embedder
	path    string
	index   string // the vector index it opens with
	eng     *core.Engine
	handles map[string]*core.Engine
}

func (s *store) openEngine(ctx context.Context) (*core.Engine, error) {
	d := s.r.backends[s.backend]
	bc, err := withPath(s.r.backendConfig(s.backend, d), s.path)
	if err != nil {
		return nil, err
	}
	b, err := d.Open(ctx, bc)
	if err != nil {
		return nil, fmt.Errorf("open %s backend: %w", s.backend, err)
	}
	var rr core.Reranker
	if s.r.reranker != nil {
		rr = s.r.reranker
	}
	eng, err := core.Open(ctx, core.Options{Backend: b, Embedder: s.emb, VectorIndex: s.index, VectorPrecision: s.r.cfg.VectorPrecision, Search: s.r.cfg.Search,
		Reranker: rr,
		// Measure the embedder, not the cache: queries repeat across modes.
		EmbedCacheSize: -1,
		// Ingest measures the store, not the contradiction detector (one
		// vector search per memory with entities): see TestContradictionDetectorOnLoCoMo.
		Govern: core.GovernConfig{Contradictions: core.ContradictOff},
		// As the CLI does: the vector index is kept next to the store.
		VectorSnapshot: s.path + ".vectors"})
	if err != nil {
		return nil, errors.Join(err, b.Close())
	}
	return eng, nil
}

// ingest writes c's documents in batches into a new store and closes it.
// It returns the document key of every memory id.
func (s *store) ingest(ctx context.Context, c *dataset.Corpus, ing *Ingest, prog *progress) (map[int64]string, error) {
	eng, err := s.openEngine(ctx)
	if err != nil {
		return nil, err
	}
	keys := make(map[int64]string, len(c.Docs))
	ins := make([]core.Input, 0, s.r.cfg.BatchSize)
	for start := 0; start < len(c.Docs); start += s.r.cfg.BatchSize {
		docs := c.Docs[start:min(start+s.r.cfg.BatchSize, len(c.Docs))]
		ins = ins[:0]
		for i := range docs {
			ins = append(ins, docs[i].Input)
		}
		t0 := time.Now()
		ms, err := eng.RememberBatch(ctx, ins)
		el := time.Since(t0)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("documents %d–%d: %w", start, start+len(docs)-1, err), eng.Close())
		}
		ing.Batches = append(ing.Batches, core.Duration(el))
		ing.Total += core.Duration(el)
		for i, m := range ms {
			keys[m.ID] = docs[i].Key
		}
		prog.ingested(len(docs))
	}
	if err := eng.Close(); err != nil {
		return nil, fmt.Errorf("close: %w", err)
	}
	return keys, nil
}

// build opens the closed store with s.index, which builds that index from
// the store's vectors when its snapshot holds another, and closes it again,
// which saves the new index. It returns how long the open took.
func (s *store) build(ctx context.Context) (time.Duration, error) {
	t0 := time.Now()
	eng, err := s.openEngine(ctx)
	if err != nil {
		return 0, err
	}
	took := time.Since(t0)
	if err := eng.Close(); err != nil {
		return 0, fmt.Errorf("close: %w", err)
	}
	return took, nil
}

// open reopens the closed store and runs the first query: the cold open.
func (s *store) open(ctx context.Context, c *dataset.Corpus, cp *corpusPlan) (OpenSample, error) {
	var o OpenSample
	rss0 := settledRSS()
	t0 := time.Now()
	eng, err := s.openEngine(ctx)
	if err != nil {
		return o, err
	}
	o.Open = core.Duration(time.Since(t0))
	s.eng, s.handles = eng, map[string]*core.Engine{}
	if len(cp.order) > 0 {
		q := &c.Queries[cp.order[0]]
		t1 := time.Now()
		if _, err := s.search(ctx, q, core.ModeHybrid, s.r.cfg.Limit); err != nil {
			return o, errors.Join(err, eng.Close())
		}
		o.FirstQuery = core.Duration(time.Since(t1))
	}
	if rss0 > 0 {
		o.RSS = max(settledRSS()-rss0, 0)
	}
	return o, nil
}

// handle returns the engine scoped to a query's namespace.
func (s *store) handle(ns string) (*core.Engine, error) {
	if ns == "" || ns == core.DefaultNamespace {
		return s.eng, nil
	}
	if h := s.handles[ns]; h != nil {
		return h, nil
	}
	h, err := s.eng.In(ns)
	if err != nil {
		return nil, err
	}
	s.handles[ns] = h
	return h, nil
}

func (s *store) search(ctx context.Context, q *dataset.Query, mode core.Mode, limit int) (*core.SearchResult, error) {
	h, err := s.handle(q.Namespace)
	if err != nil {
		return nil, fmt.Errorf("query %s: %w", q.ID, err)
	}
	res, err := h.Search(ctx, core.SearchRequest{Query: q.Text, Mode: mode, Limit: limit})
	if err != nil {
		return nil, fmt.Errorf("query %s (%s): %w", q.ID, mode, err)
	}
	return res, nil
}

// PackBudget is the token budget of the context packs the benchmark times
// (the default of a pack request).
const PackBudget = 800

// pack builds the context pack for a query's text.
func (s *store) pack(ctx context.Context, q *dataset.Query) error {
	h, err := s.handle(q.Namespace)
	if err != nil {
		return fmt.Errorf("query %s: %w", q.ID, err)
	}
	if _, err := h.ContextPack(ctx, core.PackRequest{Query: q.Text, Budget: PackBudget}); err != nil {
		return fmt.Errorf("query %s (context pack): %w", q.ID, err)
	}
	return nil
}

// query runs the warm-up and the timed queries of every mode and of context
// packs, then scores every labelled query of the corpus in every mode.
func (s *store) query(ctx context.Context, c *dataset.Corpus, cp *corpusPlan, keys map[int64]string,
	samples map[core.Mode][]time.Duration, packs *[]time.Duration, sc *scorer, prog *progress) error {
	if len(cp.order) == 0 {
		return nil
	}
	warm := min(s.r.cfg.Warmup, len(cp.order))
	for _, mode := range Modes {
		for i := range warm {
			if _, err := s.search(ctx, &c.Queries[cp.order[i]], mode, s.r.cfg.Limit); err != nil {
				return err
			}
		}
		for _, qi := range cp.timed {
			t0 := time.Now()
			_, err := s.search(ctx, &c.Queries[qi], mode, s.r.cfg.Limit)
			el := time.Since(t0)
			if err != nil {
				return err
			}
			samples[mode] = append(samples[mode], el)
			prog.queried()
		}
	}
	for i := range warm {
		if err := s.pack(ctx, &c.Queries[cp.order[i]]); err != nil {
			return err
		}
	}
	for _, qi := range cp.timed {
		t0 := time.Now()
		err := s.pack(ctx, &c.Queries[qi])
		el := time.Since(t0)
		if err != nil {
			return err
		}
		*packs = append(*packs, el)
		prog.queried()
	}
	limit := max(sc.ks[len(sc.ks)-1], 10)
	for _, mode := range Modes {
		for _, qi := range cp.order {
			q := &c.Queries[qi]
			if !q.Labelled() {
				continue
			}
			res, err := s.search(ctx, q, mode, limit)
			if err != nil {
				return err
			}
			ranked := make([]string, len(res.Hits))
			for i, h := range res.Hits {
				ranked[i] = keys[h.Memory.ID]
			}
			sc.add(mode, c.Name, q, ranked)
			prog.queried()
		}
	}
	return nil
}

// scorer accumulates per-query quality.
type scorer struct {
	ks  []int
	per map[core.Mode][]QueryScore
}

func newScorer(ks []int) *scorer { return &scorer{ks: ks, per: map[core.Mode][]QueryScore{}} }

func (sc *scorer) add(mode core.Mode, corpus string, q *dataset.Query, ranked []string) {
	qs := QueryScore{ID: q.ID, Corpus: corpus, Category: q.Category, Relevant: len(q.Relevant),
		Recall: make(map[int]float64, len(sc.ks)), NDCG10: NDCGAt(ranked, q.Relevant, 10)}
	for _, k := range sc.ks {
		qs.Recall[k] = RecallAt(ranked, q.Relevant, k)
	}
	sc.per[mode] = append(sc.per[mode], qs)
}

// result averages the scores; nil when nothing was labelled.
func (sc *scorer) result() map[core.Mode]*Quality {
	if len(sc.per) == 0 {
		return nil
	}
	out := map[core.Mode]*Quality{}
	for _, mode := range Modes {
		per := sc.per[mode]
		q := &Quality{PerQuery: per, ByCategory: map[string]*CategoryScore{}}
		q.Queries, q.Recall, q.NDCG10 = mean(per, sc.ks)
		cats := map[string][]QueryScore{}
		for _, s := range per {
			if s.Category != "" {
				cats[s.Category] = append(cats[s.Category], s)
			}
		}
		if len(cats) > 1 {
			for name, ss := range cats {
				cs := &CategoryScore{}
				cs.Queries, cs.Recall, cs.NDCG10 = mean(ss, sc.ks)
				q.ByCategory[name] = cs
			}
		}
		out[mode] = q
	}
	return out
}

func mean(per []QueryScore, ks []int) (n int, recall map[int]float64, ndcg float64) {
	recall = make(map[int]float64, len(ks))
	if len(per) == 0 {
		return 0, recall, 0
	}
	for _, s := range per {
		for _, k := range ks {
			recall[k] += s.Recall[k]
		}
		ndcg += s.NDCG10
	}
	for _, k := range ks {
		recall[k] /= float64(len(per))
	}
	return len(per), recall, ndcg / float64(len(per))
}

// withPath returns a copy of a backend config (a pointer to a struct, as
// NewConfig returns it) with its path setting — the string field tagged
// koanf:"path", or named Path — set to path. A config without one but with
// a schema setting (koanf:"schema", a database backend) gets a schema named
// after path instead, so that each store of a run is fresh.
func withPath(cfg any, path string) (any, error) {
	v := reflect.ValueOf(cfg)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil, core.Invalidf("config is a %T, want a pointer to the backend's Config struct", cfg)
	}
	cp := reflect.New(v.Elem().Type())
	cp.Elem().Set(v.Elem())
	t := cp.Elem().Type()
	schema := -1
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("koanf"), ",")
		if !f.IsExported() || f.Type.Kind() != reflect.String {
			continue
		}
		if tag == "path" || (tag == "" && f.Name == "Path") {
			cp.Elem().Field(i).SetString(path)
			return cp.Interface(), nil
		}
		if tag == "schema" {
			schema = i
		}
	}
	if schema >= 0 {
		h := sha256.Sum256([]byte(path))
		cp.Elem().Field(schema).SetString("bench_" + hex.EncodeToString(h[:8]))
		return cp.Interface(), nil
	}
	return nil, core.Invalidf("%T has no path or schema setting, so the benchmark cannot give the backend a fresh store", cfg)
}

// Destroyer is implemented by backends whose stores are not files in the
// benchmark's temporary directory (a database schema): Destroy removes the
// store with everything in it and closes the backend.
type Destroyer interface {
	Destroy(ctx context.Context) error
}

// openBackend opens the store's backend alone.
func (s *store) openBackend(ctx context.Context) (core.Backend, error) {
	d := s.r.backends[s.backend]
	bc, err := withPath(s.r.backendConfig(s.backend, d), s.path)
	if err != nil {
		return nil, err
	}
	return d.Open(ctx, bc)
}

// diskUsage is the size of the files in dir (the store and its vector
// snapshot) plus, for a backend that keeps the store elsewhere (no default
// path: a database), the size_bytes it reports in BackendStats.
func (s *store) diskUsage(ctx context.Context, dir string) (size, alloc int64, err error) {
	if size, alloc, err = DiskUsage(dir); err != nil || s.r.backends[s.backend].DefaultPath != "" {
		return size, alloc, err
	}
	b, err := s.openBackend(ctx)
	if err != nil {
		return 0, 0, err
	}
	defer b.Close()
	if st, ok := b.(core.BackendStater); ok {
		m, err := st.BackendStats(ctx)
		if err != nil {
			return 0, 0, err
		}
		if n, ok := m["size_bytes"].(int64); ok {
			size, alloc = size+n, alloc+n
		}
	}
	return size, alloc, nil
}

// destroy removes a store that Destroyer backends keep outside the
// temporary directory.
func (s *store) destroy(ctx context.Context) error {
	b, err := s.openBackend(ctx)
	if err != nil {
		return err
	}
	if d, ok := b.(Destroyer); ok {
		return d.Destroy(ctx)
	}
	return b.Close()
}

package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/memos-go/memos/core"
)

// Report is everything one benchmark run measured, with the machine it ran
// on. JSON writes its measured durations as the configuration writes
// durations ("1.25ms", "2m3.5s"; core.Duration).
type Report struct {
	Machine  Machine       `json:"machine"`
	Settings Settings      `json:"settings"`
	Started  time.Time     `json:"started"`
	Elapsed  core.Duration `json:"elapsed"`
	// Results has one entry per data set × embedder × backend, in that order.
	Results []*Result `json:"results"`
	// Comparisons relate each backend to the first one on the same data set
	// and embedder, from figures measured in this run.
	Comparisons []Comparison `json:"comparisons,omitempty"`
	// Notes say what the run left out: the data sets' notes (what their
	// loaders skipped) and those of the front-end (memos bench: backends
	// not configured).
	Notes []string `json:"notes,omitempty"`
	// Failures are the runs that ended in an error; Results holds the others.
	Failures []Failure `json:"failures,omitempty"`
}

// Failure is a run (one data set, backend and embedder) that ended in an
// error instead of a Result.
type Failure struct {
	Dataset  string `json:"dataset"`
	Docs     int    `json:"docs"`
	Backend  string `json:"backend"`
	Embedder string `json:"embedder"`
	Error    string `json:"error"`
}

// Settings are the parameters the figures depend on.
type Settings struct {
	Backends        []string `json:"backends"`
	Embedders       []string `json:"embedders"`
	Datasets        []string `json:"datasets"`
	K               []int    `json:"k"`
	Queries         int      `json:"queries"`
	Warmup          int      `json:"warmup"`
	Limit           int      `json:"limit"`
	BatchSize       int      `json:"batch_size"`
	Seed            int64    `json:"seed"`
	VectorIndexes   []string `json:"vector_indexes"`
	VectorPrecision string   `json:"vector_precision,omitempty"`
	// Search is the search configuration, its durations written as the
	// configuration writes them ("720h").
	Search core.SearchSettings `json:"search"`
	// Reranker is the reranker every search used ("": none).
	Reranker string `json:"reranker,omitempty"`
}

// Result is the measurement of one backend with one embedder on one data set.
type Result struct {
	Dataset string `json:"dataset"`
	// Docs counts the memories ingested over all Corpora stores.
	Docs     int    `json:"docs"`
	Corpora  int    `json:"corpora"`
	Backend  string `json:"backend"`
	Embedder string `json:"embedder"`
	// VectorIndex is the vector index the store was queried with;
	// IndexBuild is how long building it from the ingested store took
	// (summed over corpora; 0 for the index the store was ingested with).
	VectorIndex string         `json:"vector_index"`
	IndexBuild  core.Duration  `json:"index_build,omitempty"`
	Model       core.ModelInfo `json:"model"`
	Ingest      Ingest         `json:"ingest"`
	Open        Open           `json:"open"`
	// DiskBytes is the size of the stores' files after ingest and close,
	// summed over corpora, as ls shows it; DiskAllocated is the space the
	// file system allocated for them, as du counts it (smaller when a store
	// preallocates sparse space; the same as DiskBytes where unknown).
	DiskBytes     int64 `json:"disk_bytes"`
	DiskAllocated int64 `json:"disk_allocated_bytes"`
	// PeakRSS is the process's peak resident set size (VmHWM) at the end of
	// the run; PeakRSSScope is "run" when the peak was reset at the start of
	// the run, "process" when it could not be (then it is the peak since the
	// process started). It is process-wide either way: loaded embedders and
	// data sets count. 0 when the platform does not report it.
	PeakRSS      int64  `json:"peak_rss_bytes"`
	PeakRSSScope string `json:"peak_rss_scope,omitempty"`
	// OpenRSS is what the open stores hold in memory, summed over corpora:
	// for each, the growth of the process's resident set (VmRSS, each
	// reading taken after a garbage collection that returns freed memory to
	// the OS) from before the cold open to after its first query. It
	// counts the vector index, caches and mapped store pages the open
	// store touched; 0 when the platform does not report VmRSS.
	OpenRSS int64 `json:"open_rss_bytes"`
	// DiskPer100k and OpenRSSPer100k are DiskAllocated and OpenRSS scaled
	// to 100,000 memories (× 100,000 / Docs). For small stores the fixed
	// costs dominate and the scaled figure overstates; measure at 100k for
	// the real one.
	DiskPer100k    float64 `json:"disk_bytes_per_100k"`
	OpenRSSPer100k float64 `json:"open_rss_bytes_per_100k"`
	// Latency and Quality are keyed by search mode: keyword, vector, hybrid.
	Latency map[core.Mode]*Latency `json:"latency"`
	// Pack times the context pack (budget PackBudget) of each timed query.
	Pack    *Latency               `json:"pack,omitempty"`
	Quality map[core.Mode]*Quality `json:"quality,omitempty"`
	// Rerank counts the reranker's calls during the timed and scored
	// queries (nil without a reranker).
	Rerank  *Rerank       `json:"rerank,omitempty"`
	Elapsed core.Duration `json:"elapsed"`
}

// Ingest measures RememberBatch: validation, embedding, the write
// transaction and the vector index update.
type Ingest struct {
	Docs      int             `json:"docs"`
	Total     core.Duration   `json:"total"`
	PerSecond float64         `json:"per_second"`
	Batches   []core.Duration `json:"batches"`
	// Written is what the process wrote to storage from the open of each
	// new store to its Close (the WAL, its checkpoints, the vector
	// snapshot): write_bytes of /proc/self/io, Linux only (0 elsewhere).
	// It counts a page once until the kernel writes it back, so it is a
	// lower bound for a write-back cache that holds pages long.
	Written int64 `json:"written_bytes,omitempty"`
}

// Open measures opening a store that is not open: backend and engine open
// (which loads the vector index) and the first query, once per corpus.
type Open struct {
	Samples []OpenSample `json:"samples"`
	// Median is the median of Open+FirstQuery over the samples.
	Median core.Duration `json:"median"`
}

// OpenSample is one cold open.
type OpenSample struct {
	Open       core.Duration `json:"open"`
	FirstQuery core.Duration `json:"first_query"`
	// RSS is the growth of VmRSS over the open and first query (see
	// Result.OpenRSS).
	RSS int64 `json:"rss_bytes"`
}

// Latency holds the timed queries of one search mode after warm-up.
// Percentiles are nearest-rank over the raw samples.
type Latency struct {
	Queries int             `json:"queries"`
	P50     core.Duration   `json:"p50"`
	P95     core.Duration   `json:"p95"`
	P99     core.Duration   `json:"p99"`
	Mean    core.Duration   `json:"mean"`
	Max     core.Duration   `json:"max"`
	Samples []core.Duration `json:"samples"`
}

// Quality is retrieval quality of one search mode over the labelled
// queries: means of recall@k for every k and of nDCG@10.
type Quality struct {
	Queries    int                       `json:"queries"`
	Recall     map[int]float64           `json:"recall"`
	NDCG10     float64                   `json:"ndcg_at_10"`
	ByCategory map[string]*CategoryScore `json:"by_category,omitempty"`
	PerQuery   []QueryScore              `json:"per_query"`
}

// CategoryScore is Quality restricted to one query category.
type CategoryScore struct {
	Queries int             `json:"queries"`
	Recall  map[int]float64 `json:"recall"`
	NDCG10  float64         `json:"ndcg_at_10"`
}

// QueryScore is one labelled query's result.
type QueryScore struct {
	ID       string          `json:"id"`
	Corpus   string          `json:"corpus,omitempty"`
	Category string          `json:"category,omitempty"`
	Relevant int             `json:"relevant"`
	Recall   map[int]float64 `json:"recall"`
	NDCG10   float64         `json:"ndcg_at_10"`
}

// Comparison relates Backend to Baseline on the same data set, embedder and
// vector index:
// each figure is Backend's divided by Baseline's (ingest rate: > 1 is
// faster; latency and disk: < 1 is faster or smaller).
type Comparison struct {
	Dataset  string  `json:"dataset"`
	Docs     int     `json:"docs"`
	Embedder string  `json:"embedder"`
	Index    string  `json:"vector_index"`
	Baseline string  `json:"baseline"`
	Backend  string  `json:"backend"`
	Ingest   float64 `json:"ingest_rate"`
	// P50 is the ratio of median latencies per search mode.
	P50  map[core.Mode]float64 `json:"p50"`
	Open float64               `json:"open"`
	Disk float64               `json:"disk"`
}

// Modes are the search modes a benchmark measures, in report order.
var Modes = []core.Mode{core.ModeKeyword, core.ModeVector, core.ModeHybrid}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteTable writes the report for people: the machine, one row per run,
// the comparisons and the notes.
func (r *Report) WriteTable(w io.Writer) error {
	m := r.Machine
	fmt.Fprintf(w, "memos bench: %s %s/%s, %s, %d cores; seed %d; %d timed queries per mode after %d warm-up, limit %d\n\n",
		m.GoVersion, m.OS, m.Arch, m.CPU, m.Cores, r.Settings.Seed, r.Settings.Queries, r.Settings.Warmup, r.Settings.Limit)
	if r.Settings.Reranker != "" {
		if top := rerankTop(r.Settings.Search.Config()); top > 0 {
			fmt.Fprintf(w, "reranker %s on every search (its top %d candidates; latency includes its calls)\n\n", r.Settings.Reranker, top)
		} else {
			fmt.Fprintf(w, "reranker %s configured, but search.rerank_top %d turns the rerank stage off\n\n", r.Settings.Reranker, top)
		}
	}
	if m.LoadAverage > float64(m.Cores) {
		fmt.Fprintf(w, "warning: the load average was %.1f on %d cores when the benchmark started; other work competed for the CPU, so the timings are noisy\n\n", m.LoadAverage, m.Cores)
	}
	ks := r.allK()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := []string{"DATASET", "DOCS", "BACKEND", "EMBEDDER", "INDEX", "INGEST/s",
		"KEYWORD ms p50/95/99", "VECTOR ms p50/95/99", "HYBRID ms p50/95/99", "PACK ms p50/95/99"}
	for _, k := range ks {
		head = append(head, fmt.Sprintf("R@%d kw/vec/hyb", k))
	}
	head = append(head, "nDCG@10 kw/vec/hyb", "OPEN ms", "DISK (du)", "WRITTEN", "PEAK RSS", "DISK/100k", "OPEN RSS/100k")
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, run := range r.Results {
		index := run.VectorIndex
		if run.IndexBuild > 0 {
			index += fmt.Sprintf(" (built in %.1f s)", run.IndexBuild.D().Seconds())
		}
		row := []string{run.Dataset, fmt.Sprint(run.Docs), run.Backend, run.Embedder, index, fmt.Sprintf("%.0f", run.Ingest.PerSecond)}
		for _, mode := range Modes {
			row = append(row, latencyCell(run.Latency[mode]))
		}
		row = append(row, latencyCell(run.Pack))
		for _, k := range ks {
			row = append(row, qualityCell(run.Quality, func(q *Quality) (float64, bool) {
				v, ok := q.Recall[k]
				return v, ok
			}))
		}
		row = append(row, qualityCell(run.Quality, func(q *Quality) (float64, bool) { return q.NDCG10, true }),
			ms(run.Open.Median.D()), diskCell(run), writtenCell(run), rssCell(run), FormatBytes(int64(run.DiskPer100k)), openRSSCell(run))
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.Comparisons) > 0 {
		fmt.Fprintln(w, "\nRelative to the first backend (same data set, embedder and vector index, this run): ingest rate ×, p50 latency × (keyword/vector/hybrid), open ×, disk ×")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, c := range r.Comparisons {
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s vs %s\tingest %.2f×\tp50 %.2f×/%.2f×/%.2f×\topen %.2f×\tdisk %.2f×\n",
				c.Dataset, c.Docs, c.Embedder, c.Index, c.Backend, c.Baseline, c.Ingest,
				c.P50[core.ModeKeyword], c.P50[core.ModeVector], c.P50[core.ModeHybrid], c.Open, c.Disk)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	fmt.Fprintln(w, "\nINDEX: the vector index queried; a store is ingested with the first one and the others are built from it after. INGEST/s: memories per second through RememberBatch (embedding included).")
	fmt.Fprintf(w, "Latency: one search, query embedding included; PACK: one context pack of at most %d tokens.\n", PackBudget)
	fmt.Fprintln(w, "R@k: mean share of a query's relevant documents in the top k; \"-\": no labels. OPEN: cold open + first query (median over stores).")
	fmt.Fprintln(w, "DISK: space the store files take after ingest, as du counts it (ls size too when much larger: sparse preallocation).")
	fmt.Fprintln(w, "WRITTEN: what the ingest wrote to storage, the Close included (/proc/self/io write_bytes), and its ratio to DISK.")
	fmt.Fprintln(w, "PEAK RSS: the whole process's peak (VmHWM), reset at the start of each run, \"(process)\" where it could not be.")
	fmt.Fprintln(w, "/100k: scaled to 100,000 memories. OPEN RSS: growth of VmRSS (after GC) over the cold open and first query: what an open store holds.")
	for _, run := range r.Results {
		if rr := run.Rerank; rr != nil && rr.Failed > 0 {
			fmt.Fprintf(w, "warning: %s (%d docs) on %s with %s: the reranker failed %d of %d calls; those searches kept the fused order, so the figures mix reranked and unreranked searches\n",
				run.Dataset, run.Docs, run.Backend, run.Embedder, rr.Failed, rr.Calls)
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintln(w, "note: "+n)
	}
	for _, f := range r.Failures {
		fmt.Fprintf(w, "FAILED: %s (%d docs) on %s with %s: %s\n", f.Dataset, f.Docs, f.Backend, f.Embedder, f.Error)
	}
	fmt.Fprintf(w, "elapsed %s\n", r.Elapsed.D().Round(time.Millisecond))
	return nil
}

// rerankTop is how many candidates the rerank stage reorders under sc.
func rerankTop(sc core.SearchConfig) int {
	if sc.RerankTop == 0 {
		return core.DefaultSearchConfig().RerankTop
	}
	return sc.RerankTop
}

// allK lists every cutoff any run reports recall for, ascending.
func (r *Report) allK() []int {
	var ks []int
	for _, run := range r.Results {
		for _, q := range run.Quality {
			for k := range q.Recall {
				if !slices.Contains(ks, k) {
					ks = append(ks, k)
				}
			}
		}
	}
	if len(ks) == 0 {
		ks = slices.Clone(r.Settings.K)
	}
	slices.Sort(ks)
	return ks
}

func latencyCell(l *Latency) string {
	if l == nil || l.Queries == 0 {
		return "-"
	}
	return ms(l.P50.D()) + "/" + ms(l.P95.D()) + "/" + ms(l.P99.D())
}

func qualityCell(qs map[core.Mode]*Quality, get func(*Quality) (float64, bool)) string {
	parts := make([]string, 0, len(Modes))
	have := false
	for _, mode := range Modes {
		q := qs[mode]
		if q == nil || q.Queries == 0 {
			parts = append(parts, "-")
			continue
		}
		v, ok := get(q)
		if !ok {
			parts = append(parts, "-")
			continue
		}
		have = true
		parts = append(parts, fmt.Sprintf("%.3f", v))
	}
	if !have {
		return "-"
	}
	return strings.Join(parts, "/")
}

// ms formats a duration in milliseconds with three significant digits or so.
func ms(d time.Duration) string {
	v := float64(d) / float64(time.Millisecond)
	switch {
	case d == 0:
		return "0"
	case v < 1:
		return fmt.Sprintf("%.3f", v)
	case v < 10:
		return fmt.Sprintf("%.2f", v)
	case v < 100:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

// FormatBytes prints n bytes in binary units: "512 B", "3.4 MiB".
func FormatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for x := n / unit; x >= unit; x /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

func diskCell(run *Result) string {
	s := FormatBytes(run.DiskAllocated)
	if run.DiskBytes > 2*run.DiskAllocated && run.DiskBytes-run.DiskAllocated >= 1<<20 {
		s += " (ls " + FormatBytes(run.DiskBytes) + ")"
	}
	return s
}

// writtenCell is what the ingest wrote and its ratio to the store's size.
func writtenCell(run *Result) string {
	if run.Ingest.Written <= 0 {
		return "-" // no /proc
	}
	s := FormatBytes(run.Ingest.Written)
	if run.DiskAllocated > 0 {
		s += fmt.Sprintf(" (%.1f×)", float64(run.Ingest.Written)/float64(run.DiskAllocated))
	}
	return s
}

func openRSSCell(run *Result) string {
	if run.OpenRSS == 0 && run.PeakRSS == 0 {
		return "-" // no /proc
	}
	return FormatBytes(int64(run.OpenRSSPer100k))
}

func rssCell(run *Result) string {
	if run.PeakRSS == 0 {
		return "-"
	}
	s := FormatBytes(run.PeakRSS)
	if run.PeakRSSScope == "process" {
		s += " (process)"
	}
	return s
}

// compare builds the comparisons: within each (data set, docs, embedder)
// group, every backend against the group's first.
func compare(runs []*Result) []Comparison {
	var out []Comparison
	ratio := func(a, b float64) float64 {
		if b == 0 {
			return 0
		}
		return a / b
	}
	for i, base := range runs {
		first := true
		for _, prev := range runs[:i] {
			if sameGroup(prev, base) {
				first = false
				break
			}
		}
		if !first {
			continue
		}
		for _, run := range runs[i+1:] {
			if !sameGroup(run, base) || run.Backend == base.Backend {
				continue
			}
			c := Comparison{Dataset: base.Dataset, Docs: base.Docs, Embedder: base.Embedder, Index: base.VectorIndex, Baseline: base.Backend, Backend: run.Backend,
				Ingest: ratio(run.Ingest.PerSecond, base.Ingest.PerSecond),
				Open:   ratio(float64(run.Open.Median), float64(base.Open.Median)),
				Disk:   ratio(float64(run.DiskAllocated), float64(base.DiskAllocated)),
				P50:    map[core.Mode]float64{}}
			for _, mode := range Modes {
				if a, b := run.Latency[mode], base.Latency[mode]; a != nil && b != nil {
					c.P50[mode] = ratio(float64(a.P50), float64(b.P50))
				}
			}
			out = append(out, c)
		}
	}
	return out
}

func sameGroup(a, b *Result) bool {
	return a.Dataset == b.Dataset && a.Docs == b.Docs && a.Embedder == b.Embedder && a.VectorIndex == b.VectorIndex
}

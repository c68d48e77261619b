package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/memos-go/memos/cmd/memos/config"
	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/core/bench"
	"github.com/memos-go/memos/core/bench/dataset"
)

func (a *app) benchCmd() *cobra.Command {
	var (
		backends, embedders, sizes, datasets []string
		indexes                              []string
		ks                                   []int
		queries, warmup, corpora, batch      int
		seed                                 int64
		outFile, plotOut, dir                string
	)
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Compare backends and embedders on speed and retrieval quality",
		Long: `Bench runs the same workloads on every backend and embedder and prints one row
per data set × backend × embedder: ingest rate, keyword / vector / hybrid
query latency (p50/p95/p99), recall@k and nDCG@10 per retriever on labelled
data, cold open time, disk size and peak memory.

Each store is built in a fresh temporary directory (removed afterwards) from
the same data, and queried in the same shuffled order (--seed), after a
warm-up, with access tracking off. Your stores are not touched; embedder,
ranking and reranker settings come from your memos configuration
(embedder.<name>.*, search.*, reranker.*), e.g. MEMOS_EMBEDDER__WORDVEC__PATH
for wordvec's vectors. With a reranker (reranker.name, or --reranker) every
search asks it — checked with one call before the first run — and each row
counts its calls; failed calls, which leave a search in its fused order, are
reported with a warning.

Without --dataset it runs a synthetic workload (a seeded corpus with a Zipf
vocabulary, namespaces and queries with known answers) of 10k memories on
every backend compiled in, with the hash embedder; a backend that needs a
database server (postgres) is left out, with a note, unless it is configured
(backends.postgres.dsn) or named with --backends. A backend that was named or
configured and fails makes the bench fail. Data sets:
  turns:SIZE:DIR       SIZE memories of real conversation text: the LoCoMo and
                       LongMemEval dev turns in the data directory DIR, repeated
                       with other names and numbers (turn-level recall, a lower bound)
  locomo:FILE          LoCoMo conversations (turn-level recall; category 5 not scored)
  longmemeval:FILE     LongMemEval, .json or .json.gz (each question its own store)
  beir:DIR             BEIR layout: corpus.jsonl, queries.jsonl, qrels/*.tsv
The data sets are not shipped with memos; missing ones are skipped.

--out FILE writes every raw figure and the machine it ran on as JSON; the
global --json prints that report instead of the table; --plot FILE.svg or
FILE.png draws latency against size and recall per retriever.`,
		Example: `  memos bench
  memos bench --backends sqlite,bolt --embedders hash,wordvec --sizes 10k,100k
  memos bench --dataset locomo:../shared/data/locomo/locomo-dev.json --k 5,10,20
  memos bench --backends sqlite --sizes 10k,100k,1m --vector-index exact,hnsw --plot growth.svg
  memos bench --backends sqlite --dataset turns:1m:../shared/data --embedders wordvec --vector-index hnsw
  memos bench --dataset longmemeval:lme.json.gz --corpora 20 --dataset beir:scifact --out out.json --plot out.svg`,
		Args: cobra.NoArgs,
		RunE: a.runE(func(cmd *cobra.Command, _ []string) error {
			if plotOut != "" && !bench.Plots { // fail now, not after the runs
				return fmt.Errorf("--plot: %w", bench.ErrNoPlot)
			}
			cfg := bench.Config{Backends: backends, Embedders: embedders, K: ks, Queries: queries,
				Warmup: warmup, BatchSize: batch, Seed: seed, Dir: dir, VectorIndexes: indexes}
			for _, s := range sizes {
				n, err := dataset.ParseSize(s)
				if err != nil {
					return fmt.Errorf("--sizes: %w", err)
				}
				cfg.Sizes = append(cfg.Sizes, n)
			}
			var notes []string
			if err := a.benchSettings(cmd, &cfg, &notes); err != nil {
				return err
			}
			for _, spec := range datasets {
				d, err := dataset.Load(spec, dataset.Options{MaxCorpora: corpora, Seed: seed, SyntheticQueries: queries})
				if errors.Is(err, fs.ErrNotExist) {
					fmt.Fprintf(a.stderr, "memos bench: skipping %s: %v\n", spec, err)
					continue
				}
				if err != nil {
					return fmt.Errorf("--dataset %s: %w", spec, err)
				}
				cfg.Datasets = append(cfg.Datasets, d)
			}
			if len(datasets) > 0 && len(cfg.Sizes) == 0 && len(cfg.Datasets) == 0 {
				return fmt.Errorf("%w: nothing to benchmark: none of the --dataset files exists (give --sizes for a synthetic workload)", core.ErrNotFound)
			}
			if isTerminal(a.stderr) {
				cfg.Progress = a.stderr
			}
			rep, err := bench.Run(cmd.Context(), cfg)
			if hinted := settingsHint(err); hinted != nil {
				return hinted
			}
			if rep == nil {
				return err
			}
			rep.Notes = append(notes, rep.Notes...)
			// A failed run does not lose the finished ones: they are
			// written and printed, then the failure is returned.
			if err := a.writeBenchReport(rep, outFile, plotOut); err != nil {
				return err
			}
			return err
		}),
	}
	flags := cmd.Flags()
	flags.StringSliceVar(&backends, "backends", nil, "backends to compare (default: every one compiled in, except database servers not configured)")
	flags.StringSliceVar(&embedders, "embedders", []string{"hash"}, "embedders to compare")
	flags.StringSliceVar(&sizes, "sizes", nil, "synthetic corpus sizes, e.g. 10k,100k (default 10k without --dataset)")
	flags.StringArrayVar(&datasets, "dataset", nil, "data set: locomo:FILE, longmemeval:FILE, beir:DIR or turns:SIZE:DIR (repeatable)")
	flags.StringSliceVar(&indexes, "vector-index", nil, "vector indexes to measure, e.g. exact,hnsw: ingest with the first, build the others from the store (default: vector.index of the configuration)")
	flags.IntSliceVar(&ks, "k", []int{10}, "recall cutoffs")
	flags.IntVar(&queries, "queries", 200, "timed queries per search mode and data set (also the synthetic query count)")
	flags.IntVar(&warmup, "warmup", 20, "untimed warm-up queries per store and mode")
	flags.IntVar(&corpora, "corpora", 0, "read at most this many corpora per data set (LongMemEval questions, LoCoMo conversations; 0: all)")
	flags.IntVar(&batch, "batch", 500, "memories per RememberBatch call")
	flags.Int64Var(&seed, "seed", 1, "seed of the synthetic data and the query order")
	flags.StringVar(&outFile, "out", "", "also write the full report as JSON to this file")
	flags.StringVar(&plotOut, "plot", "", "draw the charts to this .svg or .png file")
	flags.StringVar(&dir, "dir", "", "where the temporary stores go (default: the system's temporary directory)")
	flags.String("reranker", "", "the reranker every search uses, or none (default: reranker.name of the configuration)")
	return cmd
}

// settingsHint returns err with where the settings of the embedder or
// reranker that failed are read from, or nil when err is not such a
// failure.
func settingsHint(err error) error {
	if ee := (*bench.EmbedderError)(nil); errors.As(err, &ee) {
		return fmt.Errorf("%w (the bench reads embedder %s's settings from embedder.%s.* in the config file or MEMOS_EMBEDDER__%s__* variables)",
			err, ee.Name, ee.Name, strings.ToUpper(ee.Name))
	}
	if re := (*bench.RerankerError)(nil); errors.As(err, &re) {
		return fmt.Errorf("%w (the bench reads reranker %s's settings from reranker.%s.* in the config file or MEMOS_RERANKER__%s__* variables; --reranker none measures without it)",
			err, re.Name, re.Name, strings.ToUpper(re.Name))
	}
	return nil
}

// writeBenchReport writes rep to outFile (JSON) and plotOut (charts), when
// given, and prints it as JSON or as a table.
func (a *app) writeBenchReport(rep *bench.Report, outFile, plotOut string) error {
	if outFile != "" {
		if err := writeFileWith(outFile, rep.WriteJSON); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	if a.json {
		if err := rep.WriteJSON(a.stdout); err != nil {
			return err
		}
	} else if err := rep.WriteTable(a.stdout); err != nil {
		return err
	}
	if plotOut != "" {
		if err := rep.SavePlot(plotOut); err != nil {
			return fmt.Errorf("--plot: %w", err)
		}
	}
	for _, f := range []struct{ what, path string }{{"report", outFile}, {"chart", plotOut}} {
		if f.path != "" {
			fmt.Fprintf(a.stderr, "memos bench: wrote the %s to %s\n", f.what, f.path)
		}
	}
	return nil
}

// benchSettings fills the backends' and embedders' settings, the ranking
// settings and the vector index from the memos configuration, decoded for
// each module exactly as for a store that uses it. Without --backends it
// leaves out the backends that need a server nobody configured, each with
// a note in notes.
func (a *app) benchSettings(cmd *cobra.Command, cfg *bench.Config, notes *[]string) error {
	var base []config.Flag
	pf := cmd.Root().PersistentFlags()
	if pf.Changed("home") {
		base = append(base, config.Flag{Key: "home", Name: "--home", Value: a.home})
	}
	if pf.Changed("postgres-dsn") { // else the postgres runs would ignore it
		base = append(base, config.Flag{Key: "backends.postgres.dsn", Name: "--postgres-dsn", Value: a.postgresDSN})
	}
	if f := cmd.Flags().Lookup("reranker"); f != nil && f.Changed {
		base = append(base, config.Flag{Key: "reranker.name", Name: "--reranker", Value: f.Value.String()})
	}
	named := len(cfg.Backends) > 0
	if !named {
		cfg.Backends = bench.DefaultBackends()
	}
	load := func(key, flag, name string) (*config.Config, error) {
		flags := append(append([]config.Flag(nil), base...), config.Flag{Key: key, Name: flag, Value: name})
		return config.Load(config.Options{Env: a.environ, Flags: flags})
	}
	cfg.BackendConfigs, cfg.EmbedderConfigs = map[string]any{}, map[string]any{}
	var kept []string
	for _, name := range cfg.Backends {
		d, err := core.LookupBackend(name)
		if err != nil {
			return fmt.Errorf("--backends: %w", err)
		}
		c, err := load("backend", "--backends", name)
		if err != nil {
			return err
		}
		// A backend whose store is a server (no path in the home) runs only
		// when the user named it or configured it: the defaults of a
		// database connection are a guess, not a request to measure it.
		if !named && d.DefaultPath == "" && !configured(c, name) {
			*notes = append(*notes, fmt.Sprintf("skipped backend %s: it needs a database server and none is configured "+
				"(set backends.%s.* in the config file or MEMOS_BACKENDS__%s__* variables, or name it with --backends %s)",
				name, name, strings.ToUpper(name), name))
			continue
		}
		kept = append(kept, name)
		cfg.BackendConfigs[name] = c.BackendConfig
		if len(kept) == 1 {
			cfg.Search, cfg.VectorPrecision = c.Search, c.VectorPrecision
			cfg.Reranker, cfg.RerankerConfig = c.Reranker, c.RerankerConfig
			if len(cfg.VectorIndexes) == 0 {
				cfg.VectorIndexes = []string{c.VectorIndex}
			}
		}
	}
	if len(kept) == 0 {
		return fmt.Errorf("%w: nothing to benchmark: %s; name a backend with --backends", core.ErrInvalid, strings.Join(*notes, "; "))
	}
	cfg.Backends = kept
	for _, name := range cfg.Embedders {
		if _, err := core.LookupEmbedder(name); err != nil {
			return fmt.Errorf("--embedders: %w", err)
		}
		c, err := load("embedder.name", "--embedders", name)
		if err != nil {
			return err
		}
		cfg.EmbedderConfigs[name] = c.EmbedderConfig
	}
	return nil
}

// configured reports whether the user set anything in backend name's
// section (config file, environment or flag).
func configured(c *config.Config, name string) bool {
	for _, v := range c.Values {
		if strings.HasPrefix(v.Key, "backends."+name+".") && v.Source != config.SourceDefault {
			return true
		}
	}
	return false
}

// isTerminal reports whether w is a character device, where progress bars
// belong; bars in a log file or a pipe would be noise.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// writeFileWith creates path and fills it with write.
func writeFileWith(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	return errors.Join(write(f), f.Close())
}

// Command bench-backends runs memos' backend benchmark through the library
// API (package core/bench), as a team would from its own program: pick the
// backends and embedders by import, describe the workload, print the table,
// keep the JSON and the chart.
//
//	go run ./examples/bench-backends
//	go run ./examples/bench-backends -sizes 10k,100k -embedders hash,wordvec \
//	    -glove ../shared/data/glove/glove-6b-100d-top100k.txt.gz \
//	    -dataset locomo:../shared/data/locomo/locomo-dev.json -k 5,10,20 \
//	    -json bench.json -plot bench.svg
//
// Data sets that are not on disk are skipped with a message.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"strconv"
	"strings"

	_ "github.com/memos-go/memos/backends/bolt"
	_ "github.com/memos-go/memos/backends/sqlite"
	"github.com/memos-go/memos/core/bench"
	"github.com/memos-go/memos/core/bench/dataset"
	_ "github.com/memos-go/memos/embedders/hash"
	"github.com/memos-go/memos/embedders/wordvec"
)

// list is a comma-separated, repeatable flag.
type list []string

func (l *list) String() string { return strings.Join(*l, ",") }
func (l *list) Set(s string) error {
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			*l = append(*l, v)
		}
	}
	return nil
}

func main() {
	var backends, embedders, sizes, ks, datasets list
	flag.Var(&backends, "backends", "backends to compare (default: every one linked in)")
	flag.Var(&embedders, "embedders", "embedders to compare (default: hash)")
	flag.Var(&sizes, "sizes", "synthetic corpus sizes, e.g. 10k,100k (default 10k without -dataset)")
	flag.Var(&ks, "k", "recall cutoffs (default 10)")
	flag.Var(&datasets, "dataset", "locomo:PATH, longmemeval:PATH or beir:DIR (repeatable)")
	glove := flag.String("glove", "", "GloVe vectors for the wordvec embedder")
	queries := flag.Int("queries", 200, "timed queries per search mode")
	corpora := flag.Int("corpora", 0, "load at most this many corpora per data set (LongMemEval: questions)")
	seed := flag.Int64("seed", 1, "seed for the synthetic data and the query order")
	jsonOut := flag.String("json", "", "write the full report as JSON to this file")
	plotOut := flag.String("plot", "", "write the charts to this .svg or .png file")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, backends, embedders, sizes, ks, datasets, *glove, *queries, *corpora, *seed, *jsonOut, *plotOut); err != nil {
		fmt.Fprintln(os.Stderr, "bench-backends:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, backends, embedders, sizes, ks, datasets list, glove string, queries, corpora int, seed int64, jsonOut, plotOut string) error {
	cfg := bench.Config{
		Backends:  backends,
		Embedders: embedders,
		Queries:   queries,
		Seed:      seed,
		Progress:  os.Stderr,
		// Embedder settings are typed configs, as their drivers define them.
		EmbedderConfigs: map[string]any{wordvec.Name: &wordvec.Config{Path: glove}},
	}
	for _, s := range sizes {
		n, err := dataset.ParseSize(s)
		if err != nil {
			return err
		}
		cfg.Sizes = append(cfg.Sizes, n)
	}
	for _, s := range ks {
		k, err := strconv.Atoi(s)
		if err != nil {
			return fmt.Errorf("-k %q: want whole numbers", s)
		}
		cfg.K = append(cfg.K, k)
	}
	for _, spec := range datasets {
		d, err := dataset.Load(spec, dataset.Options{MaxCorpora: corpora, Seed: seed})
		if errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(os.Stderr, "skipping %s: %v\n", spec, err)
			continue
		}
		if err != nil {
			return err
		}
		cfg.Datasets = append(cfg.Datasets, d)
	}
	if len(datasets) > 0 && len(cfg.Datasets) == 0 && len(cfg.Sizes) == 0 {
		return errors.New("none of the data sets is on disk; nothing to run")
	}

	rep, err := bench.Run(ctx, cfg)
	if err != nil {
		return err
	}
	if err := rep.WriteTable(os.Stdout); err != nil {
		return err
	}
	if jsonOut != "" {
		f, err := os.Create(jsonOut)
		if err != nil {
			return err
		}
		if err := errors.Join(rep.WriteJSON(f), f.Close()); err != nil {
			return err
		}
	}
	if plotOut != "" {
		return rep.SavePlot(plotOut)
	}
	return nil
}

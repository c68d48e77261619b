// Package bench compares memos backends and embedders side by side on
// speed and retrieval quality. It is what `memos bench` runs, and a program
// can run the same benchmark:
//
//	rep, err := bench.Run(ctx, bench.Config{
//		Backends:  []string{"sqlite", "bolt"},
//		Embedders: []string{"hash"},
//		Sizes:     []int{10_000, 100_000},
//		K:         []int{5, 10, 20},
//		Progress:  os.Stderr,
//	})
//	rep.WriteTable(os.Stdout)
//	rep.SavePlot("bench.svg")
//
// # Method
//
// Workloads come from package dataset: a seeded synthetic corpus per size,
// and labelled public benchmarks (LoCoMo, LongMemEval, BEIR). For every data
// set × embedder × backend, Run ingests each corpus into a fresh store in
// its own temporary directory through Engine.RememberBatch (timing every
// batch), closes the store and sums the sizes of its files, reopens it and
// times the open and the first query (the cold open), runs a few untimed
// warm-up queries, then times each query of a fixed shuffled list once per
// search mode — keyword, vector and hybrid — with access tracking off, so
// that queries never write. Latency percentiles are nearest-rank over the
// raw samples. Finally every labelled query is run in every mode and scored:
// recall@k for each requested k and nDCG@10 (linear gains, as BEIR's
// evaluation computes it).
//
// Every backend and embedder sees the same data and the same query order
// (both from Config.Seed); runs are sequential, and the comparisons between
// backends come from one process on one machine. The report records the Go
// version, OS, CPU model and core count with every raw figure.
//
// # Caveats
//
// Peak RSS (VmHWM) is process-wide: it includes the loaded embedders and
// data sets. On Linux it is reset at the start of each run so that it
// covers that run; elsewhere it is not available. Open times are "cold" for
// the store, not for the operating system's page cache. Synthetic queries
// are lexical by construction (they name words of their topic), so they
// measure speed and the ranking pipeline, not semantic understanding; use
// the labelled data sets for that.
package bench

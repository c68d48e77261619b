// Package dataset holds the workloads of memos' benchmark (package
// core/bench): a seeded synthetic generator and loaders for public retrieval
// benchmarks — LoCoMo, LongMemEval and any data set in BEIR's layout.
//
// Every loader returns the same shape, a Dataset: one or more corpora, each
// ingested into its own fresh store, and queries over each corpus, labelled
// with the keys of the documents that answer them where the benchmark says
// so. A program can build its own Dataset from its own data in the same way
// and hand it to bench.Run.
//
// The public data sets are not part of memos (their licences do not allow
// it); the loaders read them from wherever the user keeps them. A missing
// file is an error that wraps fs.ErrNotExist, so that a front-end can skip
// the data set with a message instead of failing the whole run.
package dataset

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/memos-go/memos/core"
)

// Dataset is a benchmark workload: corpora to ingest and queries to run.
type Dataset struct {
	// Name identifies the workload in reports, e.g. "synthetic", "locomo",
	// "beir:scifact".
	Name string
	// Corpora are ingested one at a time, each into a fresh store; a query
	// only ever runs against its own corpus.
	Corpora []Corpus
	// ExtraK lists cutoffs beyond the caller's that the benchmark's standard
	// metrics need (BEIR: recall@100).
	ExtraK []int
	// Notes says what the loader left out or repaired, for the report.
	Notes []string
}

// Corpus is the content of one store and the queries run against it.
type Corpus struct {
	Name    string
	Docs    []Doc
	Queries []Query
}

// Doc is one memory to ingest. Key identifies it within its corpus; query
// labels refer to it.
type Doc struct {
	Key   string
	Input core.Input
}

// Query is a question over one corpus.
type Query struct {
	ID   string
	Text string
	// Namespace is the scope the query runs in ("" for the default one); it
	// sees that namespace and the default one.
	Namespace string
	// Category groups queries in per-query results (LoCoMo's question
	// category, LongMemEval's question type).
	Category string
	// Time is when the question was asked (LongMemEval's question_date),
	// the "now" its relative time words refer to; zero when the benchmark
	// does not say (LoCoMo).
	Time time.Time
	// Relevant maps the keys of the documents that answer the query to their
	// graded relevance (> 0). An empty map means the query has no labels: it
	// is timed but not scored.
	Relevant map[string]float64
}

// Labelled reports whether q has relevance labels.
func (q *Query) Labelled() bool { return len(q.Relevant) > 0 }

// Docs returns the number of documents over all corpora.
func (d *Dataset) Docs() int {
	n := 0
	for i := range d.Corpora {
		n += len(d.Corpora[i].Docs)
	}
	return n
}

// Queries returns the number of queries over all corpora and how many of
// them are labelled.
func (d *Dataset) Queries() (all, labelled int) {
	for i := range d.Corpora {
		for j := range d.Corpora[i].Queries {
			all++
			if d.Corpora[i].Queries[j].Labelled() {
				labelled++
			}
		}
	}
	return all, labelled
}

// Options limit what a loader reads. The zero value reads everything.
type Options struct {
	// MaxCorpora, if positive, keeps only the first corpora: LoCoMo
	// conversations, LongMemEval questions (each its own haystack).
	MaxCorpora int
	// MaxQueries, if positive, keeps only the first labelled queries of each
	// corpus (unlabelled ones are dropped once the limit is reached).
	MaxQueries int
	// Split names the BEIR qrels file to use (qrels/<split>.tsv); "" means
	// the first of test, dev and train that exists.
	Split string
	// Seed seeds the synthetic generator.
	Seed int64
	// SyntheticQueries is the number of generated queries of the synthetic
	// and turns data sets (default 200).
	SyntheticQueries int
}

// Kinds lists the data set kinds Load understands.
var Kinds = []string{"synthetic", "turns", "locomo", "longmemeval", "beir"}

// Load reads the data set named by spec, "<kind>:<location>":
//
//	synthetic:10k              a generated corpus of 10,000 memories
//	turns:1m:DIR               1,000,000 memories of the dev turns in DIR, varied (Turns)
//	locomo:PATH                LoCoMo's JSON (e.g. locomo10.json)
//	longmemeval:PATH           LongMemEval's JSON, optionally gzipped
//	beir:DIR                   corpus.jsonl, queries.jsonl and qrels/*.tsv
func Load(spec string, opts Options) (*Dataset, error) {
	kind, loc, ok := strings.Cut(spec, ":")
	if !ok || loc == "" {
		return nil, core.Invalidf("dataset %q: want <kind>:<path> with kind one of %s (e.g. locomo:data/locomo10.json)", spec, strings.Join(Kinds, ", "))
	}
	switch kind {
	case "synthetic":
		n, err := ParseSize(loc)
		if err != nil {
			return nil, err
		}
		return Synthetic(SyntheticOptions{Docs: n, Queries: opts.SyntheticQueries, Seed: opts.Seed})
	case "turns":
		size, dir, ok := strings.Cut(loc, ":")
		if !ok || dir == "" {
			return nil, core.Invalidf("dataset %q: want turns:<size>:<data directory>, e.g. turns:1m:../shared/data", spec)
		}
		n, err := ParseSize(size)
		if err != nil {
			return nil, err
		}
		return Turns(TurnsOptions{Dir: dir, Docs: n, Queries: opts.SyntheticQueries, Seed: opts.Seed})
	case "locomo":
		return LoadLoCoMo(loc, opts)
	case "longmemeval":
		return LoadLongMemEval(loc, opts)
	case "beir":
		return LoadBEIR(loc, opts)
	}
	return nil, core.Invalidf("dataset %q: unknown kind %q (want one of %s)", spec, kind, strings.Join(Kinds, ", "))
}

// ParseSize reads a document count such as "200", "10k", "1.5k" or "1m".
func ParseSize(s string) (int, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := 1.0
	switch {
	case strings.HasSuffix(t, "k"):
		mult, t = 1e3, strings.TrimSuffix(t, "k")
	case strings.HasSuffix(t, "m"):
		mult, t = 1e6, strings.TrimSuffix(t, "m")
	}
	f, err := strconv.ParseFloat(t, 64)
	v := f * mult
	if err != nil || !(v >= 1 && v <= 100_000_000) || v != float64(int(v)) {
		return 0, core.Invalidf("size %q: want a whole number of documents from 1 to 100m, such as 200, 10k or 1m", s)
	}
	return int(v), nil
}

// openData opens path, transparently gunzipping it when it starts with the
// gzip magic bytes.
func openData(path string) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(f, 1<<16)
	magic, _ := br.Peek(2)
	if !bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		return struct {
			io.Reader
			io.Closer
		}{br, f}, nil
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return struct {
		io.Reader
		io.Closer
	}{zr, closers{zr, f}}, nil
}

type closers []io.Closer

func (cs closers) Close() error {
	var first error
	for _, c := range cs {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// clip shortens s to at most core.MaxContentBytes at a rune boundary, so
// that an over-long document is stored (truncated) instead of rejected.
func clip(s string) (string, bool) {
	if len(s) <= core.MaxContentBytes {
		return s, false
	}
	i := core.MaxContentBytes
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i], true
}

// limitQueries applies Options.MaxQueries to one corpus's queries.
func limitQueries(qs []Query, max int) []Query {
	if max <= 0 {
		return qs
	}
	var out []Query
	labelled := 0
	for _, q := range qs {
		if labelled == max {
			break
		}
		if q.Labelled() {
			labelled++
		}
		out = append(out, q)
	}
	return out
}

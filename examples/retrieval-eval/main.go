// Command retrieval-eval measures memos' retrieval pipeline on the shared
// evaluation data: turn-level recall@5/@10/@20 on LoCoMo (categories 1–4)
// and session recall@5 / turn recall@10 on LongMemEval-S, for keyword only,
// vector only, hybrid, and hybrid with expansion, with the hash or the
// wordvec (GloVe) embedder. It is how the defaults of core.SearchConfig were
// chosen; -cfg runs the same queries under other settings. -category adds
// a table per question category (LoCoMo's "temporal", LongMemEval's
// "temporal-reasoning"); every question is searched with its reference time
// (LongMemEval's question_date; for LoCoMo, which has none, its
// conversation's last session date), so that "last weekend" means what it
// meant when the question was asked.
//
//	go run ./examples/retrieval-eval -data ../shared/data -embedder wordvec
//	go run ./examples/retrieval-eval -set longmemeval -embedder hash
//	go run ./examples/retrieval-eval -cfg '{"session_factor":0.3}' -cfg '{"session_window":2}'
//	go run ./examples/retrieval-eval -cv -set locomo,longmemeval,scifact -embedder wordvec,hash -scores /tmp/cv
//	go run ./examples/retrieval-eval -report /tmp/cv -set locomo,longmemeval,scifact -embedder wordvec,hash
//	go run ./examples/retrieval-eval -only keyword -keyword-prune-rows -1
//	go run ./examples/retrieval-eval -backend bolt -only keyword
//	go run ./examples/retrieval-eval -set longmemeval -only keyword,expand -misses
//
// -misses prints each question whose evidence the last variant leaves out
// of its top 10: the evidence turns, where every variant ranked them, and
// the last variant's first hits — what to read before changing the
// pipeline.
//
// -cv cross-validates a grid of search settings (the -cfg ones, or the
// built-in grid in cv.go): each is tuned on some folds and reported on the
// held-out one, with in-fold numbers beside (see cv.go); it also measures
// nDCG@10 and SciFact (BEIR layout, train qrels). Folds are LoCoMo's
// conversations (leave one out) and -folds hash folds of the other sets'
// questions; with several -set, each data set is also left out in turn and
// the setting chosen on the others is scored on it. A setting is chosen
// by its worst gain over keyword search on the folds (or sets) it is tuned
// on, not its mean; the engine's defaults are a candidate too, and are
// kept unless another setting's worst case is larger beyond one standard
// error. -sample keeps a share of the questions for a quicker
// grid.
//
// The data sets are read with core/bench/dataset's loaders (LoCoMo: one raw
// memory per turn, "Speaker: text", with its session and the session's
// date; LongMemEval: one per user or assistant turn); session recall counts
// the sessions of a question's evidence turns. The data sets are not part
// of memos (see ../shared/data/README.md); the
// command says so and exits 0 when they are absent.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/memos-go/memos/backends/bolt"
	"github.com/memos-go/memos/backends/sqlite"
	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/core/bench"
	"github.com/memos-go/memos/core/bench/dataset"
	"github.com/memos-go/memos/core/driver"
	_ "github.com/memos-go/memos/core/vector"
	"github.com/memos-go/memos/examples/internal/evaldata"
)

// corpus is one store's worth of turns and the questions over it.
type corpus struct {
	name      string
	docs      []doc
	questions []question
}

type doc struct {
	key string
	in  core.Input
}

type question struct {
	id       string
	text     string
	turns    []string           // evidence turn keys
	relevant map[string]float64 // evidence keys with their graded relevance (nDCG)
	sessions []string           // evidence session ids (LongMemEval)
	category string
	// ref is when the question was asked: LongMemEval's question_date,
	// else the latest event time in its corpus (LoCoMo's last session).
	ref time.Time
}

type cfgList []string

func (c *cfgList) String() string     { return strings.Join(*c, " ") }
func (c *cfgList) Set(s string) error { *c = append(*c, s); return nil }

func main() {
	data := flag.String("data", "../shared/data", "the shared data directory")
	set := flag.String("set", "locomo", "locomo or longmemeval")
	embName := flag.String("embedder", "hash", "hash, wordvec (GloVe from -data), or another registered embedder (ollama, openai, plugin) with its settings from the memos configuration")
	rerankName := flag.String("reranker", "", "a registered reranker (http, plugin) every search asks, with its settings from the memos configuration (default: none)")
	maxCorpora := flag.Int("max", 0, "use only the first N corpora (0: all)")
	only := flag.String("only", "", "run only these variants (comma-separated: keyword,vector,hybrid,expand)")
	base := flag.String("base", "", "a search config as JSON applied to every variant")
	category := flag.String("category", "", "also report these question categories separately (comma-separated, e.g. temporal or temporal-reasoning; \"all\": every one)")
	corpora := flag.String("corpora", "", "use only these corpora, by 0-based index (comma-separated, e.g. 0,2,4)")
	noRef := flag.Bool("no-ref-time", false, "search without the questions' reference time (the time words are then read against now)")
	misses := flag.Bool("misses", false, "print every question whose evidence the last variant leaves out of its top 10: the evidence, its rank under each variant, and the last variant's first hits")
	var cfgs cfgList
	flag.Var(&cfgs, "cfg", "a search config as JSON (keys as in the config file); repeatable; each adds a row")
	flag.IntVar(&pruneRows, "keyword-prune-rows", 0, "the store's keyword_prune_rows (0: its default; -1: score every match)")
	flag.StringVar(&backendName, "backend", sqlite.Name, "the stores' backend: sqlite or bolt")
	scores := flag.String("scores", "", "with -cv: write every question's scores under every setting to DIR/<set>-<embedder>.tsv")
	cv := flag.Bool("cv", false, "cross-validate: tune a grid of settings (the -cfg ones, or a built-in grid) on some folds, report on the held-out one; -set and -embedder take comma-separated lists (locomo,longmemeval,scifact)")
	sample := flag.Float64("sample", 1, "with -cv: keep this share of each data set's questions (by a hash of the question id; e.g. 0.5 for a quicker grid search)")
	folds := flag.Int("folds", 5, "with -cv: question folds of LongMemEval-S and SciFact (LoCoMo: one per conversation)")
	reportDir := flag.String("report", "", "print the -cv report again from the score files a -cv -scores run wrote to this directory (for each -set and -embedder), without searching")
	flag.Parse()
	if backendName != sqlite.Name && backendName != bolt.Name {
		fmt.Fprintf(os.Stderr, "retrieval-eval: -backend %q: use %s or %s\n", backendName, sqlite.Name, bolt.Name)
		os.Exit(2)
	}
	rr, err := evaldata.Reranker(context.Background(), *rerankName, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, "retrieval-eval:", err)
		os.Exit(1)
	}
	if rr != nil {
		reranker = rr
		defer rr.Shutdown()
		defer rerankReport(os.Stdout)
	}
	if *reportDir != "" {
		if err := reportScores(*reportDir, strings.Split(*set, ","), strings.Split(*embName, ",")); err != nil {
			fmt.Fprintln(os.Stderr, "retrieval-eval:", err)
			os.Exit(1)
		}
		return
	}
	if *cv {
		o := cvOptions{maxCorpora: *maxCorpora, sample: *sample, folds: *folds, scoresDir: *scores}
		err := runCV(context.Background(), *data, strings.Split(*set, ","), strings.Split(*embName, ","), cfgs, o)
		if errors.Is(err, fs.ErrNotExist) {
			fmt.Printf("skipped: %v (the evaluation data lives in ../shared/data; see its README)\n", err)
			return
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "retrieval-eval:", err)
			os.Exit(1)
		}
		return
	}
	opts := options{category: *category, corpora: *corpora, noRef: *noRef, misses: *misses}
	if err := run(context.Background(), *data, *set, *embName, *maxCorpora, *only, *base, cfgs, opts); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			fmt.Printf("skipped: %v (the evaluation data lives in ../shared/data; see its README)\n", err)
			return
		}
		fmt.Fprintln(os.Stderr, "retrieval-eval:", err)
		os.Exit(1)
	}
}

// reranker is the -reranker flag's reranker (nil: none), which every
// engine shares.
var reranker *bench.CountingReranker

// openEngine opens the store at path for searching with emb under cfg,
// with the -reranker reranker asked on every search (no pause after
// failures: they are counted instead, see rerankReport).
func openEngine(ctx context.Context, path string, emb core.Embedder, cfg core.SearchConfig) (*core.Engine, error) {
	b, err := openBackend(ctx, path, pruneRows)
	if err != nil {
		return nil, err
	}
	cfg.DisableAccessTracking = true
	opts := core.Options{Backend: b, Embedder: noClose{emb}, Search: cfg}
	if reranker != nil {
		opts.Reranker = reranker
		opts.Search.RerankPauseAfter = -1
	}
	eng, err := core.Open(ctx, opts)
	if err != nil {
		return nil, errors.Join(err, b.Close())
	}
	return eng, nil
}

// rerankReport says how many calls the -reranker reranker answered: when
// some failed, those searches kept the fused order and the figures above
// mix the two.
func rerankReport(w io.Writer) {
	if reranker == nil {
		return
	}
	c := reranker.Counts()
	fmt.Fprintf(w, "reranker %s: %d calls, %d failed\n", reranker.Name(), c.Calls, c.Failed)
	if c.Failed > 0 {
		fmt.Fprintf(w, "warning: %d searches kept the fused order because the reranker failed; the figures mix reranked and unreranked searches\n", c.Failed)
	}
}

// pruneRows is the -keyword-prune-rows flag: the stores searched are
// opened with it as keyword_prune_rows.
var pruneRows int

// backendName is the -backend flag: the backend of the stores.
var backendName string

// openBackend opens the store at path with the -backend backend and
// keyword_prune_rows rows.
func openBackend(ctx context.Context, path string, rows int) (driver.Backend, error) {
	switch backendName {
	case sqlite.Name:
		s, err := sqlite.Open(ctx, sqlite.Config{Path: path, KeywordPruneRows: rows})
		if err != nil {
			return nil, err
		}
		return s, nil
	case bolt.Name:
		b, err := bolt.Open(ctx, bolt.Config{Path: path, KeywordPruneRows: rows})
		if err != nil {
			return nil, err
		}
		return b, nil
	}
	return nil, fmt.Errorf("-backend %q: use %s or %s", backendName, sqlite.Name, bolt.Name)
}

// noClose hides an embedder's Close so that one loaded embedder serves many engines.
type noClose struct{ core.Embedder }

// options are the flags of the per-category breakdown and the reference time.
type options struct {
	category, corpora string
	noRef, misses     bool
}

func run(ctx context.Context, data, set, embName string, maxCorpora int, only, base string, cfgs []string, opts options) error {
	corpora, err := loadCorpora(data, set, maxCorpora, opts.corpora)
	if err != nil {
		return err
	}
	emb, err := evaldata.Embedder(ctx, data, embName)
	if err != nil {
		return err
	}
	decode := decodeConfig
	bc, err := decode(base)
	if err != nil {
		return err
	}
	var variants []variant
	for _, v := range []variant{{"keyword", core.ModeKeyword, false, bc},
		{"vector", core.ModeVector, false, bc},
		{"hybrid", core.ModeHybrid, false, bc},
		{"expand", core.ModeHybrid, true, bc}} {
		if only == "" || slices.Contains(strings.Split(only, ","), v.name) {
			variants = append(variants, v)
		}
	}
	for _, c := range cfgs {
		sc, err := decode(c)
		if err != nil {
			return err
		}
		variants = append(variants, variant{"expand " + c, core.ModeHybrid, true, sc})
	}
	dir, err := os.MkdirTemp("", "memos-eval-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	accs := make([]acc, len(variants))
	// byCat holds the same sums per category, for -category.
	byCat := make([]map[string]*acc, len(variants))
	for i := range byCat {
		byCat[i] = map[string]*acc{}
	}
	start := time.Now()
	for ci, c := range corpora {
		missed := map[int][]missRun{} // question index → each variant's result, for -misses
		path := filepath.Join(dir, fmt.Sprintf("c%d.db", ci))
		if err := ingest(ctx, path, emb, c); err != nil {
			return err
		}
		for vi, v := range variants {
			if err := evalVariant(ctx, path, emb, v, c, opts, &accs[vi], byCat[vi], missed); err != nil {
				return err
			}
		}
		os.Remove(path)
		if opts.misses {
			printMisses(os.Stdout, c, missed)
		}
	}
	fmt.Printf("%s, %d corpora, %d questions, embedder %s (%.0fs)\n", set, len(corpora), accs[0].n, embName, time.Since(start).Seconds())
	table := func(get func(i int) *acc) {
		fmt.Printf("%-40s %8s %8s %8s %8s %8s\n", "variant", "R@5", "R@10", "R@20", "sessR@5", "hits@20")
		for i, v := range variants {
			a := get(i)
			nt, ns := float64(max(a.nt, 1)), float64(max(a.ns, 1))
			fmt.Printf("%-40s %8.3f %8.3f %8.3f %8.3f %8.1f\n", v.name, a.r5/nt, a.r10/nt, a.r20/nt, a.s5/ns, a.hits/float64(max(a.n, 1)))
		}
	}
	table(func(i int) *acc { return &accs[i] })
	if opts.category != "" {
		for _, cat := range slices.Sorted(maps.Keys(byCat[0])) {
			fmt.Printf("\ncategory %s, %d questions (%d scored)\n", cat, byCat[0][cat].n, byCat[0][cat].nt)
			table(func(i int) *acc {
				if a := byCat[i][cat]; a != nil {
					return a
				}
				return &acc{}
			})
		}
	}
	return nil
}

// variant is one way of searching that run compares.
type variant struct {
	name string
	mode core.Mode
	exp  bool
	cfg  core.SearchConfig
}

// evalVariant asks the questions of c of the store at path with v, adding
// the scores to total and, for -category, to byCat, and each result to
// missed for -misses.
func evalVariant(ctx context.Context, path string, emb core.Embedder, v variant, c corpus, opts options, total *acc, byCat map[string]*acc, missed map[int][]missRun) error {
	eng, err := openEngine(ctx, path, emb, v.cfg)
	if err != nil {
		return err
	}
	keyOf := map[string]string{}
	for _, d := range c.docs {
		keyOf[d.in.Source] = d.key
	}
	for qi, q := range c.questions {
		req := core.SearchRequest{Query: q.text, Mode: v.mode, Limit: 20, NoExpand: !v.exp}
		if !opts.noRef {
			req.ReferenceTime = q.ref
		}
		res, err := eng.Search(ctx, req)
		if err != nil {
			eng.Close()
			return fmt.Errorf("%s: %q: %w", c.name, q.text, err)
		}
		var keys, sess []string
		for _, h := range res.Hits {
			keys = append(keys, keyOf[h.Memory.Source])
			sess = append(sess, h.Memory.Session)
		}
		if opts.misses {
			missed[qi] = append(missed[qi], missRun{v.name, keys, res.Hits})
		}
		as := []*acc{total}
		if opts.category != "" && (opts.category == "all" || slices.Contains(strings.Split(opts.category, ","), q.category)) {
			if byCat[q.category] == nil {
				byCat[q.category] = &acc{}
			}
			as = append(as, byCat[q.category])
		}
		for _, a := range as {
			a.add(q, keys, sess, len(res.Hits))
		}
	}
	return eng.Close()
}

// loadCorpora loads the corpora of set from data: the first maxCorpora
// (0: all), or those whose indexes pick lists ("0,3").
func loadCorpora(data, set string, maxCorpora int, pick string) ([]corpus, error) {
	var corpora []corpus
	var err error
	switch set {
	case "locomo":
		corpora, err = load(set, filepath.Join(data, "locomo", "locomo-dev.json"))
	case "longmemeval":
		corpora, err = load(set, filepath.Join(data, "longmemeval", "longmemeval-s-dev100.json.gz"))
	default:
		return nil, fmt.Errorf("unknown set %q", set)
	}
	if err != nil {
		return nil, err
	}
	if maxCorpora > 0 && len(corpora) > maxCorpora {
		corpora = corpora[:maxCorpora]
	}
	if pick != "" {
		var sel []corpus
		for _, f := range strings.Split(pick, ",") {
			var i int
			if _, err := fmt.Sscan(f, &i); err != nil || i < 0 || i >= len(corpora) {
				return nil, fmt.Errorf("-corpora %q: %q is not an index below %d", pick, f, len(corpora))
			}
			sel = append(sel, corpora[i])
		}
		corpora = sel
	}
	return corpora, nil
}

// acc sums a variant's scores over questions.
type acc struct {
	r5, r10, r20, s5 float64
	n, nt, ns        int
	hits             float64 // mean result size at limit 20
}

// add scores the answer to q: the keys and sessions of its hits, in order,
// and how many hits there were.
func (a *acc) add(q question, keys, sess []string, hits int) {
	if len(q.turns) > 0 {
		a.r5 += recall(q.turns, keys, 5)
		a.r10 += recall(q.turns, keys, 10)
		a.r20 += recall(q.turns, keys, 20)
		a.nt++
	}
	if len(q.sessions) > 0 {
		a.s5 += recall(q.sessions, sess, 5)
		a.ns++
	}
	a.hits += float64(hits)
	a.n++
}

// recall is the share of want found among the first k of got.
func recall(want, got []string, k int) float64 {
	if len(want) == 0 {
		return 0
	}
	top := got[:min(k, len(got))]
	n := 0
	for _, w := range want {
		if slices.Contains(top, w) {
			n++
		}
	}
	return float64(n) / float64(len(want))
}

func ingest(ctx context.Context, path string, emb core.Embedder, c corpus) error {
	b, err := openBackend(ctx, path, 0)
	if err != nil {
		return err
	}
	eng, err := core.Open(ctx, core.Options{Backend: b, Embedder: noClose{emb}})
	if err != nil {
		b.Close()
		return err
	}
	ins := make([]core.Input, len(c.docs))
	for i, d := range c.docs {
		ins[i] = d.in
	}
	if _, err := eng.RememberBatch(ctx, ins); err != nil {
		eng.Close()
		return fmt.Errorf("ingest %s: %w", c.name, err)
	}
	return eng.Close()
}

// load reads a data set with core/bench/dataset's loaders and keeps what
// recall needs: each corpus's documents and its labelled questions, with
// the evidence turns' sessions as the evidence sessions.
func load(kind, path string) ([]corpus, error) {
	var d *dataset.Dataset
	var err error
	switch kind {
	case "locomo":
		d, err = dataset.LoadLoCoMo(path, dataset.Options{})
	case "longmemeval":
		d, err = dataset.LoadLongMemEval(path, dataset.Options{})
	case "scifact":
		d, err = dataset.LoadBEIR(path, dataset.Options{Split: "train"})
	default:
		return nil, fmt.Errorf("unknown set %q", kind)
	}
	if err != nil {
		return nil, err
	}
	var out []corpus
	for _, c := range d.Corpora {
		cc := corpus{name: c.Name}
		session := map[string]string{}
		var latest time.Time
		for _, doc := range c.Docs {
			cc.docs = append(cc.docs, docOf(doc))
			session[doc.Key] = doc.Input.Session
			if doc.Input.ValidFrom.After(latest) {
				latest = doc.Input.ValidFrom
			}
		}
		for _, q := range c.Queries {
			if !q.Labelled() {
				continue
			}
			qq := question{id: q.ID, text: q.Text, relevant: q.Relevant, category: q.Category, ref: q.Time}
			if qq.ref.IsZero() {
				qq.ref = latest
			}
			for _, k := range slices.Sorted(maps.Keys(q.Relevant)) {
				qq.turns = append(qq.turns, k)
				if s := session[k]; kind == "longmemeval" && !slices.Contains(qq.sessions, s) {
					qq.sessions = append(qq.sessions, s)
				}
			}
			cc.questions = append(cc.questions, qq)
		}
		out = append(out, cc)
	}
	return out, nil
}

func docOf(d dataset.Doc) doc { return doc{key: d.Key, in: d.Input} }

// missRun is one variant's result for a question, for -misses.
type missRun struct {
	variant string
	keys    []string
	hits    []core.Result
}

// printMisses prints, for every question of c that the last variant does
// not answer fully in its top 10, the question, each evidence turn with its
// rank under every variant ("-": not in the result), and the last
// variant's first three hits.
func printMisses(w io.Writer, c corpus, missed map[int][]missRun) {
	text := map[string]string{}
	for _, d := range c.docs {
		text[d.key] = d.in.Content
	}
	clip := func(s string) string {
		s = strings.Join(strings.Fields(s), " ")
		if r := []rune(s); len(r) > 160 {
			s = string(r[:160]) + "…"
		}
		return s
	}
	for qi, q := range c.questions {
		runs := missed[qi]
		if len(q.turns) == 0 || len(runs) == 0 || recall(q.turns, runs[len(runs)-1].keys, 10) == 1 {
			continue
		}
		fmt.Fprintf(w, "\nMISS %s [%s] %q\n", c.name, q.category, q.text)
		for _, t := range q.turns {
			fmt.Fprintf(w, "  evidence %s:", t)
			for _, r := range runs {
				if i := slices.Index(r.keys, t); i >= 0 {
					fmt.Fprintf(w, " %s %d", r.variant, i+1)
				} else {
					fmt.Fprintf(w, " %s -", r.variant)
				}
			}
			fmt.Fprintf(w, "\n    %s\n", clip(text[t]))
		}
		last := runs[len(runs)-1]
		for i, h := range last.hits[:min(3, len(last.hits))] {
			fmt.Fprintf(w, "  hit %d (%.3f): %s\n", i+1, h.Score, clip(h.Memory.Content))
		}
	}
}

package main

// Cross-validation mode (-cv): the search settings of a small grid are tuned
// on some questions and measured on the others, so that a setting that only
// wins on the questions it was chosen on shows as such.
//
// Every setting of the grid is search-time only, so each corpus is ingested
// (and embedded) once per embedder and every setting searches the same
// store; the per-question scores of every setting are kept, and the folds
// are bookkeeping over them.

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/core/bench"
	"github.com/memos-go/memos/examples/internal/evaldata"
)

// defaultGrid is the candidate settings tuned over: the fusion weights and
// k, the gate's relative thresholds, session expansion, query feedback, the
// long-turn factor and session diversity.
// Every setting is hybrid search with expansion; keys as in the config file.
var defaultGrid = []string{
	`{"fusion":"rrf"}`,
	`{"fusion":"rrf","vector_weight":0.25}`,
	`{"fusion":"score","vector_weight":0.25}`,
	`{"fusion":"score","vector_weight":0.4}`,
	`{"fusion":"score","vector_weight":0.6}`,
	`{"fusion":"score","vector_weight":1}`,
	`{"fusion":"score","session_factor":0.6}`,
	`{"fusion":"score","session_window":2}`,
	`{"fusion":"score","session_window":2,"session_factor":0.6}`,
	`{"fusion":"score","session_window":2,"session_factor":0.5}`,
	`{"fusion":"score","session_window":3,"session_factor":0.6}`,
	`{"fusion":"score","feedback_terms":-1}`,
	`{"fusion":"score","feedback_queries":"short"}`,
	`{"fusion":"score","feedback_queries":"all"}`,
	`{"fusion":"score","session_window":2,"session_factor":0.6,"feedback_queries":"all"}`,
	`{"fusion":"score","relative_keyword":0.4}`,
	`{"fusion":"score","turn_length_weight":-1}`,
	`{"fusion":"score","turn_length_weight":0.5}`,
	`{"fusion":"score","turn_length_weight":2}`,
	`{"fusion":"score","session_diversity":-1}`,
	`{"fusion":"score","session_diversity":0.5}`,
	`{"fusion":"score","session_diversity_queries":"all"}`,
}

// setting is one way of searching: a mode, expansion on or off, a config.
type setting struct {
	name   string
	mode   core.Mode
	expand bool
	cfg    core.SearchConfig
	tuned  bool // part of the grid tuned over
}

// qscore is one question's scores under one setting.
type qscore struct {
	r5, r10, r20, ndcg10, s5 float64
	hits                     int
}

// cvQuestion is a question with the fold it belongs to.
type cvQuestion struct {
	question
	corpus int
	fold   int
}

func decodeConfig(s string) (core.SearchConfig, error) {
	var sc core.SearchConfig
	if s == "" {
		return sc, nil
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sc); err != nil {
		return sc, fmt.Errorf("config %s: %w", s, err)
	}
	return sc, nil
}

// runCV cross-validates the grid on each data set with each embedder.
func runCV(ctx context.Context, data string, sets, embedders []string, grid []string, maxCorpora int, scoresDir string) error {
	if len(grid) == 0 {
		grid = defaultGrid
	}
	settings := []setting{
		{name: "keyword", mode: core.ModeKeyword},
		{name: "vector", mode: core.ModeVector},
		{name: "hybrid (defaults, no expansion)", mode: core.ModeHybrid},
	}
	for _, g := range grid {
		sc, err := decodeConfig(g)
		if err != nil {
			return err
		}
		settings = append(settings, setting{name: "hybrid+exp " + g, mode: core.ModeHybrid, expand: true, cfg: sc, tuned: true})
	}
	for _, set := range sets {
		corpora, folds, err := loadCV(data, set, maxCorpora)
		if err != nil {
			return err
		}
		for _, embName := range embedders {
			emb, err := evaldata.Embedder(ctx, data, embName)
			if err != nil {
				return err
			}
			start := time.Now()
			qs, scores, err := evaluate(ctx, set, folds, corpora, emb, settings)
			if c, ok := emb.(interface{ Close() error }); ok {
				c.Close()
			}
			if err != nil {
				return err
			}
			if scoresDir != "" {
				if err := writeScores(filepath.Join(scoresDir, set+"-"+embName+".tsv"), qs, settings, scores); err != nil {
					return err
				}
			}
			report(set, embName, folds, qs, settings, scores, time.Since(start))
		}
	}
	return nil
}

// loadCV reads a data set and says how many folds it is split into.
func loadCV(data, set string, maxCorpora int) ([]corpus, int, error) {
	var path string
	folds := 2
	switch set {
	case "locomo":
		path = filepath.Join(data, "locomo", "locomo-dev.json")
	case "longmemeval":
		path = filepath.Join(data, "longmemeval", "longmemeval-s-dev100.json.gz")
	case "scifact":
		path = filepath.Join(data, "scifact")
	default:
		return nil, 0, fmt.Errorf("unknown set %q (want locomo, longmemeval or scifact)", set)
	}
	corpora, err := load(set, path)
	if err != nil {
		return nil, 0, err
	}
	if maxCorpora > 0 && len(corpora) > maxCorpora {
		corpora = corpora[:maxCorpora]
	}
	if set == "locomo" {
		folds = len(corpora) // leave one conversation out
	}
	return corpora, folds, nil
}

// foldOf assigns a question to a fold: LoCoMo by conversation, the others
// by a hash of the question id, so that the split is the same on every run
// and does not depend on the order of the file.
func foldOf(set string, corpus int, id string, folds int) int {
	if set == "locomo" {
		return corpus
	}
	h := fnv.New32a()
	h.Write([]byte(id))
	return int(h.Sum32() % uint32(folds))
}

// evaluate runs every question of every corpus under every setting and
// returns the questions and scores[setting][question].
func evaluate(ctx context.Context, set string, folds int, corpora []corpus, emb core.Embedder, settings []setting) ([]cvQuestion, [][]qscore, error) {
	dir, err := os.MkdirTemp("", "memos-cv-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(dir)
	var qs []cvQuestion
	scores := make([][]qscore, len(settings))
	for ci, c := range corpora {
		path := filepath.Join(dir, fmt.Sprintf("c%d.db", ci))
		if err := ingest(ctx, path, emb, c); err != nil {
			return nil, nil, err
		}
		keyOf := map[string]string{}
		for _, d := range c.docs {
			keyOf[d.in.Source] = d.key
		}
		for _, q := range c.questions {
			qs = append(qs, cvQuestion{question: q, corpus: ci, fold: foldOf(set, ci, q.id, folds)})
		}
		for si, s := range settings {
			eng, err := openEngine(ctx, path, emb, s.cfg)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", s.name, err)
			}
			for _, q := range c.questions {
				res, err := eng.Search(ctx, core.SearchRequest{Query: q.text, Mode: s.mode, Limit: 20, NoExpand: !s.expand, ReferenceTime: q.ref})
				if err != nil {
					eng.Close()
					return nil, nil, fmt.Errorf("%s: %q: %w", c.name, q.text, err)
				}
				var keys, sess []string
				for _, h := range res.Hits {
					keys = append(keys, keyOf[h.Memory.Source])
					sess = append(sess, h.Memory.Session)
				}
				var sc qscore
				sc.r5 = bench.RecallAt(keys, q.relevant, 5)
				sc.r10 = bench.RecallAt(keys, q.relevant, 10)
				sc.r20 = bench.RecallAt(keys, q.relevant, 20)
				sc.ndcg10 = bench.NDCGAt(keys, q.relevant, 10)
				sc.s5 = recall(q.sessions, sess, 5)
				sc.hits = len(res.Hits)
				scores[si] = append(scores[si], sc)
			}
			if err := eng.Close(); err != nil {
				return nil, nil, err
			}
		}
		os.Remove(path)
	}
	return qs, scores, nil
}

// objective is what tuning maximises: the mean of turn recall@10 and
// nDCG@10, and session recall@5 where the data set has sessions.
func objective(set string, s qscore) float64 {
	if set == "longmemeval" {
		return (s.r10 + s.ndcg10 + s.s5) / 3
	}
	return (s.r10 + s.ndcg10) / 2
}

// mean averages f over the questions for which in says yes.
func mean(qs []cvQuestion, sc []qscore, in func(cvQuestion) bool, f func(qscore) float64) float64 {
	sum, n := 0.0, 0
	for i, q := range qs {
		if in(q) {
			sum += f(sc[i])
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// metrics are the columns of the report.
var metrics = []struct {
	name string
	f    func(qscore) float64
}{
	{"R@5", func(s qscore) float64 { return s.r5 }},
	{"R@10", func(s qscore) float64 { return s.r10 }},
	{"R@20", func(s qscore) float64 { return s.r20 }},
	{"nDCG@10", func(s qscore) float64 { return s.ndcg10 }},
	{"sessR@5", func(s qscore) float64 { return s.s5 }},
	{"hits", func(s qscore) float64 { return float64(s.hits) }},
}

// report prints, for one data set and embedder, every setting's numbers on
// all questions, then the tuned setting out of fold (chosen on the other
// folds, scored on the held-out one) and in fold (scored on the folds it
// was chosen on).
func report(set, embName string, folds int, qs []cvQuestion, settings []setting, scores [][]qscore, took time.Duration) {
	all := func(cvQuestion) bool { return true }
	fmt.Printf("\n== %s, embedder %s: %d questions, %d folds (%.0fs)\n", set, embName, len(qs), folds, took.Seconds())
	fmt.Printf("%-52s", "setting (all questions)")
	for _, m := range metrics {
		fmt.Printf(" %8s", m.name)
	}
	fmt.Println()
	row := func(name string, vals []float64) {
		fmt.Printf("%-52s", name)
		for _, v := range vals {
			fmt.Printf(" %8.3f", v)
		}
		fmt.Println()
	}
	for si, s := range settings {
		vals := make([]float64, len(metrics))
		for mi, m := range metrics {
			vals[mi] = mean(qs, scores[si], all, m.f)
		}
		row(s.name, vals)
	}
	// Cross-validation: for each fold, the grid setting with the best
	// training objective; its scores on the held-out fold make the
	// out-of-fold numbers, its scores on the training folds the in-fold ones.
	var tuned []int
	for si, s := range settings {
		if s.tuned {
			tuned = append(tuned, si)
		}
	}
	oof := make([]qscore, len(qs))
	inSum := make([]float64, len(metrics))
	var chosen []string
	for f := range folds {
		train := func(q cvQuestion) bool { return q.fold != f }
		best, bestObj := -1, -1.0
		for _, si := range tuned {
			if o := mean(qs, scores[si], train, func(s qscore) float64 { return objective(set, s) }); o > bestObj+1e-12 {
				best, bestObj = si, o
			}
		}
		if best < 0 {
			continue
		}
		chosen = append(chosen, fmt.Sprintf("fold %d: %s", f+1, strings.TrimPrefix(settings[best].name, "hybrid+exp ")))
		for i, q := range qs {
			if q.fold == f {
				oof[i] = scores[best][i]
			}
		}
		for mi, m := range metrics {
			inSum[mi] += mean(qs, scores[best], train, m.f)
		}
	}
	in := make([]float64, len(metrics))
	out := make([]float64, len(metrics))
	for mi, m := range metrics {
		in[mi] = inSum[mi] / float64(folds)
		out[mi] = mean(qs, oof, all, m.f)
	}
	row("tuned hybrid+exp, in fold", in)
	row("tuned hybrid+exp, out of fold", out)
	fmt.Println("chosen:", strings.Join(slices.Clip(chosen), "; "))
}

// writeScores writes every question's scores under every setting as
// tab-separated rows with a header, for analyses the report does not make
// (per fold, per question, the better of two settings for each question).
func writeScores(path string, qs []cvQuestion, settings []setting, scores [][]qscore) error {
	var b strings.Builder
	b.WriteString("setting\tquestion\tfold\tr5\tr10\tr20\tndcg10\tsession_r5\thits\ttext\n")
	for si, s := range settings {
		for qi, q := range qs {
			sc := scores[si][qi]
			fmt.Fprintf(&b, "%s\t%s\t%d\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%d\t%s\n", s.name, q.id, q.fold+1,
				sc.r5, sc.r10, sc.r20, sc.ndcg10, sc.s5, sc.hits, strings.Join(strings.Fields(q.text), " "))
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("-scores: %w", err)
	}
	return nil
}

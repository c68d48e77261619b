package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/examples/internal/evaldata"
)

// TestWriteScores: -scores writes one row per setting and question, with
// the question's fold and the scores the report averages.
func TestWriteScores(t *testing.T) {
	ctx := context.Background()
	emb, err := evaldata.Embedder(ctx, "", "hash")
	if err != nil {
		t.Fatal(err)
	}
	backendName = "sqlite"
	mk := func(name, content string, qs ...question) corpus {
		c := corpus{name: name, questions: qs}
		for i, w := range strings.Split(content, "|") {
			key := name + "-" + string(rune('a'+i))
			c.docs = append(c.docs, doc{key: key, in: core.Input{Content: w, Source: key}})
		}
		return c
	}
	corpora := []corpus{
		mk("c0", "the orchard grows apples|we sailed to the island",
			question{id: "q1", text: "who grows apples?", turns: []string{"c0-a"}, relevant: map[string]float64{"c0-a": 1}}),
		mk("c1", "a violin lesson on tuesday|the kettle is broken",
			question{id: "q2", text: "when is the violin lesson", turns: []string{"c1-a"}, relevant: map[string]float64{"c1-a": 1}},
			question{id: "q3", text: "tuba recital", turns: []string{"c1-b"}, relevant: map[string]float64{"c1-b": 1}}),
	}
	settings := []setting{{name: "keyword", mode: core.ModeKeyword}, {name: "hybrid+exp {}", mode: core.ModeHybrid, expand: true}}
	qs, scores, err := evaluate(ctx, "locomo", 2, corpora, emb, settings)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "s.tsv")
	if err := writeScores(path, qs, settings, scores); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 1+2*3 || !strings.HasPrefix(lines[0], "setting\tquestion\tfold\tr5\tr10") {
		t.Fatalf("scores file:\n%s", b)
	}
	want := map[string]bool{
		"keyword\tq1\t1\t1.0000\t1.0000\t": true, // found, in the first conversation's fold
		"keyword\tq2\t2\t1.0000\t1.0000\t": true,
		"keyword\tq3\t2\t0.0000\t0.0000\t": true, // no word of it is stored
		"hybrid+exp {}\tq1\t1\t1.0000\t":   true,
	}
	for prefix := range want {
		found := false
		for _, l := range lines[1:] {
			found = found || strings.HasPrefix(l, prefix)
		}
		if !found {
			t.Errorf("no row starting %q in\n%s", prefix, b)
		}
	}
	if err := writeScores(filepath.Join(t.TempDir(), "missing", "s.tsv"), qs, settings, scores); err == nil || !strings.Contains(err.Error(), "-scores") {
		t.Errorf("unwritable path: %v", err)
	}
}

// TestLeaveOneSetOutPrefersTheSmallerWorstCase: held out SciFact, setting
// A gains most on average over the other sets but loses LongMemEval-S
// recall; B gains little but everywhere. B is chosen, and scored on the
// held-out set against keyword search.
func TestLeaveOneSetOutPrefersTheSmallerWorstCase(t *testing.T) {
	settings := []setting{{name: "keyword"}, {name: "vector"}, {name: "hybrid"}, {name: "defaults", tuned: true, incumbent: true},
		{name: "hybrid+exp A", tuned: true}, {name: "hybrid+exp B", tuned: true}}
	one := func(set string, per ...qscore) cvRun {
		r := cvRun{set: set, emb: "hash", folds: 1, qs: []cvQuestion{{question: question{id: set}}}}
		for _, s := range per {
			r.scores = append(r.scores, []qscore{s})
		}
		return r
	}
	kw := qscore{r10: 0.5, s5: 0.5, ndcg10: 0.5}
	runs := []cvRun{
		one("locomo", kw, kw, kw, kw, qscore{r10: 0.9}, qscore{r10: 0.55}),
		one("longmemeval", kw, kw, kw, kw, qscore{r10: 0.48, s5: 0.6}, qscore{r10: 0.51, s5: 0.51}),
		one("scifact", kw, kw, kw, kw, qscore{ndcg10: 0.45}, qscore{ndcg10: 0.52}),
	}
	var b strings.Builder
	reportLODO(&b, []string{"locomo", "longmemeval", "scifact"}, settings, runs)
	out := b.String()
	for _, want := range []string{
		"held out scifact: chosen on the others [5] B",
		"in fold (the other sets): worst gain over keyword +0.010",
		"out of fold, scifact hash nDCG@10: 0.520 (keyword 0.500",
		"held out locomo: chosen on the others [5] B", // A loses SciFact and LongMemEval-S recall
		"held out longmemeval: chosen on the others [5] B",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
}

// TestChooseKeepsTheDefaultsWithinNoise: the defaults (the incumbent) are
// kept when their worst case is within the standard error of the best,
// even against a larger mean gain, and replaced when a setting's worst case
// is larger beyond it.
func TestChooseKeepsTheDefaultsWithinNoise(t *testing.T) {
	defaults := gainSet{{0.010, 0.004}, {0.012, 0.010}}
	noisy := gainSet{{0.012, 0.004}, {0.050, 0.010}} // worst case +0.002, within 0.004; mean far larger
	if got := choose([]gainSet{noisy, defaults}, 1); got != 1 {
		t.Errorf("choose(noisy, defaults) = %d, want the defaults (1): noisy's worst case is within its standard error", got)
	}
	if got := choose([]gainSet{noisy, defaults}, -1); got != 0 {
		t.Errorf("without an incumbent choose(noisy, defaults) = %d, want noisy (0), the larger mean", got)
	}
	clear := gainSet{{0.030, 0.004}, {0.031, 0.004}}
	if got := choose([]gainSet{noisy, defaults, clear}, 1); got != 2 {
		t.Errorf("choose(noisy, defaults, clear) = %d, want clear (2): its worst case is larger beyond noise", got)
	}
	below := gainSet{{-0.004, 0.001}, {0.040, 0.010}}
	if got := choose([]gainSet{below, noisy}, 0); got != 1 {
		t.Errorf("choose(below, noisy) with below the incumbent = %d, want noisy (1): the incumbent's worst case is clearly lower", got)
	}
}

// TestChooseTreatsNoiseAsATie: B's worst case is 0.002 above A's, well
// within the standard error of B's worst fold (0.004), so the worst cases
// tie and A's larger mean gain decides; with standard errors of 0 (the
// rule before) B's worst case decides. A setting whose worst case is
// clearly larger (C) is chosen whatever its mean.
func TestChooseTreatsNoiseAsATie(t *testing.T) {
	a := gainSet{{0.010, 0.004}, {0.050, 0.010}}
	b := gainSet{{0.012, 0.004}, {0.020, 0.010}}
	if got := choose([]gainSet{a, b}, -1); got != 0 {
		t.Errorf("choose(A, B) = %d, want A (0): its worst case is within B's standard error, its mean larger", got)
	}
	exact := func(gs gainSet) gainSet {
		out := gainSet{}
		for _, g := range gs {
			out.add(gainSE{mean: g.mean})
		}
		return out
	}
	if got := choose([]gainSet{exact(a), exact(b)}, -1); got != 1 {
		t.Errorf("without standard errors choose(A, B) = %d, want B (1), the larger worst case", got)
	}
	c := gainSet{{0.030, 0.004}, {0.031, 0.004}}
	if got := choose([]gainSet{a, b, c}, -1); got != 2 {
		t.Errorf("choose(A, B, C) = %d, want C (2): its worst case is clearly the largest", got)
	}
	if got := choose(nil, -1); got != -1 {
		t.Errorf("choose() = %d, want -1", got)
	}
	if g := pairedGain([]cvQuestion{{}, {}, {}}, []qscore{{r10: 1}, {r10: 1}, {r10: 0}}, []qscore{{r10: 0}, {r10: 1}, {r10: 0}},
		func(cvQuestion) bool { return true }, func(s qscore) float64 { return s.r10 }); !(g.mean > 0.333 && g.mean < 0.334 && g.se > 0.333 && g.se < 0.334) {
		t.Errorf("pairedGain of differences 1, 0, 0 = %+v, want mean 1/3, standard error 1/3", g)
	}
}

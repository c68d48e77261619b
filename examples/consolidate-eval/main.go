// Command consolidate-eval measures what consolidation (memos dream) does
// to retrieval on the LoCoMo dev conversations: each conversation is
// ingested as raw turns, every scored question is asked, then the store is
// consolidated with knowledge pages and the questions are asked again. A
// turn counts as found when a retrieved memory is it or was derived from it
// (a page, or a merge survivor).
//
//	go run ./examples/consolidate-eval
//	go run ./examples/consolidate-eval -embedder wordvec
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/memos-go/memos/backends/sqlite"
	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/core/bench/dataset"
	"github.com/memos-go/memos/core/provider/summarize"
	"github.com/memos-go/memos/examples/internal/evaldata"
)

func main() {
	data := flag.String("data", "../shared/data", "the shared data directory")
	embName := flag.String("embedder", "hash", "hash or wordvec")
	k := flag.Int("k", 10, "recall cutoff")
	budget := flag.Int("budget", 400, "context pack budget in tokens")
	flag.Float64Var(&cfg.PageSimilarity, "page-similarity", 0, "consolidate.page_similarity (0: the default)")
	flag.IntVar(&cfg.PageMinSize, "page-min-size", 0, "consolidate.page_min_size (0: the default)")
	flag.Parse()
	if err := run(context.Background(), *data, *embName, *k, *budget); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			fmt.Printf("skipped: %v (the evaluation data lives in ../shared/data; see its README)\n", err)
			return
		}
		fmt.Fprintln(os.Stderr, "consolidate-eval:", err)
		os.Exit(1)
	}
}

type noClose struct{ core.Embedder }

// cfg holds the consolidation thresholds under test.
var cfg core.ConsolidateConfig

type score struct {
	questions           int
	recall              float64
	covered, evidential int
}

func run(ctx context.Context, data, embName string, k, budget int) error {
	ds, err := evaldata.LoCoMo(data)
	if err != nil {
		return err
	}
	emb, err := evaldata.Embedder(ctx, data, embName)
	if err != nil {
		return err
	}
	sum, err := summarize.OpenExtractive(ctx, summarize.ExtractiveConfig{})
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "consolidate-eval-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var before, after score
	var mBefore, mAfter, pages, merged, archived int
	var took time.Duration
	for ci, c := range ds.Corpora {
		b, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(dir, fmt.Sprintf("%d.db", ci))})
		if err != nil {
			return err
		}
		eng, err := core.Open(ctx, core.Options{Backend: b, Embedder: noClose{emb}, Summarizer: sum, Consolidate: cfg})
		if err != nil {
			return err
		}
		ins := make([]core.Input, len(c.Docs))
		for i, d := range c.Docs {
			ins[i] = d.Input
		}
		ms, err := eng.RememberBatch(ctx, ins)
		if err != nil {
			return err
		}
		key := map[int64]string{}
		for i, m := range ms {
			key[m.ID] = c.Docs[i].Key
		}
		if err := ask(ctx, eng, c, k, budget, key, &before); err != nil {
			return err
		}
		rep, err := eng.Consolidate(ctx, core.ConsolidateRequest{Pages: true})
		if err != nil {
			return err
		}
		mBefore += rep.Before
		mAfter += rep.After
		pages += len(rep.Pages)
		merged += len(rep.Merges)
		archived += len(rep.Archived)
		took += rep.Took
		var one score
		if err := ask(ctx, eng, c, k, budget, key, &one); err != nil {
			return err
		}
		fmt.Printf("  %s: R@%d after %.3f over %d questions\n", c.Name, k, one.recall/float64(one.questions), one.questions)
		after.questions += one.questions
		after.recall += one.recall
		after.covered += one.covered
		after.evidential += one.evidential
		if err := eng.Close(); err != nil {
			return err
		}
	}
	fmt.Printf("active memories %d → %d (%d merge groups, %d archived, %d pages), dream took %v\n",
		mBefore, mAfter, merged, archived, pages, took.Round(time.Millisecond))
	for _, s := range []struct {
		name string
		s    score
	}{{"before", before}, {"after", after}} {
		fmt.Printf("%-7s R@%d %.3f, %d-token pack covers %d of %d evidence turns (%d questions)\n",
			s.name, k, s.s.recall/float64(s.s.questions), budget, s.s.covered, s.s.evidential, s.s.questions)
	}
	return nil
}

// turnsOf returns the dataset keys of the turns memory id is or stands for.
func turnsOf(ctx context.Context, eng *core.Engine, id int64, key map[int64]string, seen map[int64]bool) []string {
	if k, ok := key[id]; ok {
		return []string{k}
	}
	if seen[id] {
		return nil
	}
	seen[id] = true
	edges, err := eng.Edges(ctx, id)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range edges {
		if e.From == id && e.Type == core.EdgeDerivedFrom {
			out = append(out, turnsOf(ctx, eng, e.To, key, seen)...)
		}
	}
	return out
}

func ask(ctx context.Context, eng *core.Engine, c dataset.Corpus, k, budget int, key map[int64]string, s *score) error {
	for _, q := range c.Queries {
		if !q.Labelled() {
			continue
		}
		s.questions++
		res, err := eng.Search(ctx, core.SearchRequest{Query: q.Text, Limit: k})
		if err != nil {
			return err
		}
		found := map[string]bool{}
		for _, h := range res.Hits {
			for _, t := range turnsOf(ctx, eng, h.Memory.ID, key, map[int64]bool{}) {
				found[t] = true
			}
		}
		hit := 0
		for t := range q.Relevant {
			if found[t] {
				hit++
			}
		}
		s.recall += float64(hit) / float64(len(q.Relevant))
		p, err := eng.ContextPack(ctx, core.PackRequest{Query: q.Text, Budget: budget})
		if err != nil {
			return err
		}
		covered := map[string]bool{}
		for _, it := range slices.Concat(p.Memories, p.Neighbours) {
			for _, t := range turnsOf(ctx, eng, it.ID, key, map[int64]bool{}) {
				covered[t] = true
			}
		}
		for t := range q.Relevant {
			s.evidential++
			if covered[t] {
				s.covered++
			}
		}
	}
	return nil
}

// Command capture-eval measures what Engine.Capture's extractor adds to
// retrieval on the LoCoMo dev conversations: each conversation is captured
// session by session, once with turns only and once with the rule-based
// extractor, and every scored question is asked of both stores. A retrieved
// extracted memory counts for the turns it was derived from.
//
//	go run ./examples/capture-eval                       # ../shared/data/locomo/locomo-dev.json
//	go run ./examples/capture-eval -embedder wordvec     # GloVe from ../shared/data/glove
//
// It prints memories extracted per 100 turns, capture time per turn, turn
// recall@10 of hybrid search, and how many evidence turns a 400-token
// context pack covers, for both stores.
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
	"strings"
	"time"

	"github.com/memos-go/memos/backends/sqlite"
	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/core/bench/dataset"
	"github.com/memos-go/memos/core/provider/extract"
	"github.com/memos-go/memos/examples/internal/evaldata"
)

func main() {
	data := flag.String("data", "../shared/data", "the shared data directory")
	embName := flag.String("embedder", "hash", "hash or wordvec")
	k := flag.Int("k", 10, "recall cutoff")
	budget := flag.Int("budget", 400, "context pack budget in tokens")
	flag.Parse()
	if err := run(context.Background(), *data, *embName, *k, *budget); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			fmt.Printf("skipped: %v (the evaluation data lives in ../shared/data; see its README)\n", err)
			return
		}
		fmt.Fprintln(os.Stderr, "capture-eval:", err)
		os.Exit(1)
	}
}

// noClose hides an embedder's Close so that one loaded embedder serves many engines.
type noClose struct{ core.Embedder }

type score struct {
	name                     string
	turns, extracted         int
	captureTime              time.Duration
	questions                int
	recall                   float64
	packCovered, packEvident int
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
	rules, err := extract.OpenRules(ctx, extract.RulesConfig{})
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "capture-eval-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	for _, variant := range []struct {
		name string
		x    core.Extractor
	}{{"raw turns only", nil}, {"captured (rules)", rules}} {
		s := score{name: variant.name}
		for ci, c := range ds.Corpora {
			b, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(dir, fmt.Sprintf("%d-%d.db", len(variant.name), ci))})
			if err != nil {
				return err
			}
			eng, err := core.Open(ctx, core.Options{Backend: b, Embedder: noClose{emb}, Extractor: variant.x})
			if err != nil {
				return err
			}
			if err := evalCorpus(ctx, eng, c, k, budget, &s); err != nil {
				eng.Close()
				return fmt.Errorf("%s: %w", c.Name, err)
			}
			if err := eng.Close(); err != nil {
				return err
			}
		}
		fmt.Printf("%-18s turns %d, extracted %d (%.1f per 100 turns), capture %.2f ms/turn, R@%d %.3f, %d-token pack covers %d of %d evidence turns (%d questions)\n",
			s.name, s.turns, s.extracted, 100*float64(s.extracted)/float64(s.turns),
			float64(s.captureTime.Microseconds())/1000/float64(s.turns), k, s.recall/float64(s.questions),
			budget, s.packCovered, s.packEvident, s.questions)
	}
	return nil
}

// evalCorpus captures one conversation session by session, then scores its
// questions.
func evalCorpus(ctx context.Context, eng *core.Engine, c dataset.Corpus, k, budget int, s *score) error {
	// turnsOf maps a memory id to the dataset keys of the turns it stands for.
	turnsOf := map[int64][]string{}
	var order []string
	bySession := map[string][]dataset.Doc{}
	for _, d := range c.Docs {
		if _, ok := bySession[d.Input.Session]; !ok {
			order = append(order, d.Input.Session)
		}
		bySession[d.Input.Session] = append(bySession[d.Input.Session], d)
	}
	for _, sess := range order {
		docs := bySession[sess]
		turns := make([]core.Turn, len(docs))
		for i, d := range docs {
			speaker := ""
			if len(d.Input.Entities) > 0 {
				speaker = d.Input.Entities[0]
			}
			turns[i] = core.Turn{Speaker: speaker, Text: strings.TrimPrefix(d.Input.Content, speaker+": "), Time: d.Input.ValidFrom}
		}
		start := time.Now()
		res, err := eng.Capture(ctx, core.CaptureRequest{Session: sess, Turns: turns})
		if err != nil {
			return err
		}
		s.captureTime += time.Since(start)
		s.turns += len(turns)
		s.extracted += len(res.Memories)
		for i, id := range res.Turns {
			turnsOf[id] = []string{docs[i].Key}
		}
		for _, m := range res.Memories {
			edges, err := eng.Edges(ctx, m.ID)
			if err != nil {
				return err
			}
			for _, e := range edges {
				if e.From == m.ID && e.Type == core.EdgeDerivedFrom {
					turnsOf[m.ID] = append(turnsOf[m.ID], turnsOf[e.To]...)
				}
			}
		}
	}
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
			for _, key := range turnsOf[h.Memory.ID] {
				found[key] = true
			}
		}
		hit := 0
		for key := range q.Relevant {
			if found[key] {
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
			for _, key := range turnsOf[it.ID] {
				covered[key] = true
			}
		}
		for key := range q.Relevant {
			s.packEvident++
			if covered[key] {
				s.packCovered++
			}
		}
	}
	return nil
}

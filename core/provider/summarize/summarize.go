// Package summarize holds memos' built-in summarizers, which write the
// knowledge pages of Engine.Dream: Extractive, offline and deterministic,
// which picks the most central, least redundant sentences of the members by
// maximal marginal relevance, and LLM, which asks a chat model (any
// OpenAI-compatible server, or Ollama). Both register themselves
// ("extractive", "llm"); programs pick them by import.
package summarize

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/query"
	"github.com/memos-go/memos/core/text"
)

// ExtractiveName is the extractive summarizer's registered name.
const ExtractiveName = "extractive"

// ExtractiveConfig configures Extractive; the zero value is the default.
type ExtractiveConfig struct {
	// Sentences is the most sentences a page keeps (default 6).
	Sentences int `koanf:"sentences"`
	// Lambda balances centrality against novelty in MMR (default 0.7).
	Lambda float64 `koanf:"lambda"`
}

// Extractive builds a page from the members' own sentences: each sentence
// is scored by its centrality (how many members share its words, stop words
// left out), then sentences are taken by MMR so that paraphrases do not
// repeat, and printed in member order with a citation "[#id]". Ties go to
// the earlier sentence, so the page is the same for the same members.
type Extractive struct{ cfg ExtractiveConfig }

var _ driver.Summarizer = (*Extractive)(nil)

func init() {
	driver.RegisterSummarizer(ExtractiveName, driver.NewSummarizerDriver(ExtractiveName, OpenExtractive))
}

// OpenExtractive returns the extractive summarizer.
func OpenExtractive(_ context.Context, cfg ExtractiveConfig) (*Extractive, error) {
	if cfg.Sentences < 0 || cfg.Lambda < 0 || cfg.Lambda > 1 {
		return nil, driver.Invalidf("summarizer extractive: sentences must be positive and lambda in [0,1]")
	}
	cfg.Defaults()
	return &Extractive{cfg: cfg}, nil
}

var _ driver.Defaulter = (*ExtractiveConfig)(nil)

// Defaults sets the fields of c left zero to the values OpenExtractive applies.
func (c *ExtractiveConfig) Defaults() {
	if c.Sentences == 0 {
		c.Sentences = 6
	}
	if c.Lambda == 0 {
		c.Lambda = 0.7
	}
}

type sentence struct {
	id     int64
	order  int
	text   string
	toks   map[string]bool
	center float64
}

// Summarize implements driver.Summarizer.
func (x *Extractive) Summarize(ctx context.Context, items []driver.SummaryItem) (string, error) {
	if len(items) == 0 {
		return "", driver.Invalidf("summarize: no items")
	}
	var sents []*sentence
	all := map[string]int{} // token → in how many items
	for _, it := range items {
		seen := map[string]bool{}
		for _, s := range text.Sentences(it.Content) {
			st := &sentence{id: it.ID, order: len(sents), text: s, toks: tokens(s)}
			if len(st.toks) < 3 {
				continue
			}
			for t := range st.toks {
				seen[t] = true
			}
			sents = append(sents, st)
		}
		for t := range seen {
			all[t]++
		}
	}
	if len(sents) == 0 {
		return "", nil
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	// Centrality: how much of a sentence the other members also say,
	// weighted towards words many members share.
	for _, s := range sents {
		var sum float64
		for t := range s.toks {
			sum += float64(all[t]-1) / float64(len(items))
		}
		s.center = sum / math.Sqrt(float64(len(s.toks)))
	}
	cands := append([]*sentence(nil), sents...)
	sort.SliceStable(cands, func(i, j int) bool {
		if cands[i].center != cands[j].center {
			return cands[i].center > cands[j].center
		}
		return cands[i].order < cands[j].order
	})
	best := cands[0].center
	if best <= 0 {
		best = 1
	}
	var picked []*sentence
	for len(picked) < x.cfg.Sentences && len(cands) > 0 {
		bi, bv := -1, 0.0
		for i, c := range cands {
			red := 0.0
			for _, p := range picked {
				red = max(red, text.Jaccard(c.toks, p.toks))
			}
			v := x.cfg.Lambda*c.center/best - (1-x.cfg.Lambda)*red
			if bi < 0 || v > bv {
				bi, bv = i, v
			}
		}
		picked = append(picked, cands[bi])
		cands = append(cands[:bi], cands[bi+1:]...)
	}
	sort.Slice(picked, func(i, j int) bool { return picked[i].order < picked[j].order })
	var b strings.Builder
	for _, p := range picked {
		fmt.Fprintf(&b, "- %s [#%d]\n", p.text, p.id)
	}
	return strings.TrimRight(b.String(), "\n"), nil
}

func tokens(s string) map[string]bool {
	m := map[string]bool{}
	for _, t := range text.Tokenize(s) {
		if !query.IsStopWord(t) {
			m[t] = true
		}
	}
	return m
}

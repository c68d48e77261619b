package dataset

import (
	"fmt"
	"strings"

	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/core/corpus"
)

// SyntheticOptions configure Synthetic.
type SyntheticOptions struct {
	// Docs is the number of memories, at least 1.
	Docs int
	// Queries is the number of queries (default 200).
	Queries int
	// Seed makes the data set: the same options give the same memories and
	// queries, byte for byte, on every machine and Go version.
	Seed int64
	// Vocabulary is the number of distinct words (default Docs, clamped to
	// 2,000–50,000).
	Vocabulary int
}

// Synthetic generates a labelled corpus of o.Docs memories in one store:
// the seeded corpus of package core/corpus (a Zipf vocabulary of
// pseudo-words, topics of about five memories, four namespaces), the same
// one the backend kit's benchmarks use. A query asks "what do we know
// about" three of a topic's words in the topic's namespace; every memory of
// the topic is relevant.
func Synthetic(o SyntheticOptions) (*Dataset, error) {
	gen, err := corpus.New(corpus.Options{Docs: o.Docs, Queries: o.Queries, Seed: o.Seed, Vocabulary: o.Vocabulary})
	if err != nil {
		return nil, fmt.Errorf("synthetic data set: %w", err)
	}
	c := Corpus{Name: fmt.Sprintf("synthetic-%s", corpus.FormatSize(o.Docs)), Docs: make([]Doc, len(gen.Docs))}
	for i, d := range gen.Docs {
		c.Docs[i] = Doc{Key: d.Key, Input: core.Input{
			Content:      d.Content,
			Namespace:    d.Namespace,
			Type:         d.Type,
			Significance: d.Significance,
			Source:       d.Source,
			Session:      d.Session,
		}}
	}
	for _, q := range gen.Queries {
		rel := make(map[string]float64, len(q.Relevant))
		for _, k := range q.Relevant {
			rel[k] = 1
		}
		c.Queries = append(c.Queries, Query{
			ID:        q.ID,
			Text:      "what do we know about " + strings.Join(q.Words, " "),
			Namespace: q.Namespace,
			Category:  "topic",
			Relevant:  rel,
		})
	}
	return &Dataset{Name: "synthetic", Corpora: []Corpus{c}, Notes: []string{
		"synthetic: memories are written in pseudo-words that semantic embedders (wordvec, real models) do not know; its vector recall means something for lexical embedders (hash) only — measure semantic embedders on a labelled data set",
	}}, nil
}

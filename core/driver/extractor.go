package driver

import (
	"context"
	"time"
)

// Turn is one utterance of a conversation, as an agent captures it.
type Turn struct {
	Speaker string    `json:"speaker,omitempty"`
	Text    string    `json:"text"`
	Time    time.Time `json:"time,omitzero"` // when it was said (event time); zero: unknown
}

// Extraction is a memory an Extractor proposes from a conversation: a fact,
// preference, event or relationship stated in it, written to stand on its
// own (third person, names instead of pronouns).
type Extraction struct {
	Content          string   `json:"content"`
	Type             Type     `json:"type"`
	Entities         []string `json:"entities,omitempty"`
	Significance     int      `json:"significance"` // 1–10, MemU's scale
	EmotionalContext string   `json:"emotional_context,omitempty"`
	// Turns are the indexes (into the turns given to Extract) of the turns
	// it was derived from; at least one.
	Turns []int `json:"turns"`
}

// Extractor turns conversation turns into memory-pool memories. It must be
// safe for concurrent use; a deterministic extractor returns the same
// extractions for the same turns, in the same order.
type Extractor interface {
	// Extract proposes memories from turns, which belong to one session in
	// the order they were said. It may return none.
	Extract(ctx context.Context, turns []Turn) ([]Extraction, error)
}

// ExtractorDriver is how an extractor package registers itself; see
// BackendDriver.
type ExtractorDriver struct {
	NewConfig func() any
	Open      func(ctx context.Context, cfg any) (Extractor, error)
}

var extractors = registry[ExtractorDriver]{kind: "Extractor"}

// RegisterExtractor makes an extractor available by name; see RegisterBackend.
func RegisterExtractor(name string, d ExtractorDriver) { extractors.register(name, d) }

// LookupExtractor returns the extractor registered as name, or ErrUnknownName.
func LookupExtractor(name string) (ExtractorDriver, error) { return extractors.lookup(name) }

// ExtractorNames lists the registered extractors, sorted.
func ExtractorNames() []string { return extractors.names() }

// NewExtractorDriver adapts an extractor package's typed Open to the
// registry; see NewBackendDriver.
func NewExtractorDriver[C any, X Extractor](name string, open func(context.Context, C) (X, error)) ExtractorDriver {
	return ExtractorDriver{
		NewConfig: func() any { return new(C) },
		Open: func(ctx context.Context, cfg any) (Extractor, error) {
			c, err := typedConfig[C](name, cfg)
			if err != nil {
				return nil, err
			}
			x, err := open(ctx, c)
			if err != nil {
				return nil, err
			}
			return x, nil
		},
	}
}

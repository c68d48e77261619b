package driver

import "context"

// SummaryItem is one memory a Summarizer condenses: its id (for citations),
// content and, when the store has one, its unit-length embedding.
type SummaryItem struct {
	ID      int64
	Content string
	Vector  []float32
}

// Summarizer writes a knowledge page: a stable note that stands in for a
// cluster of related memories. It must be safe for concurrent use; a
// deterministic summarizer returns the same text for the same items.
type Summarizer interface {
	// Summarize returns the page's text for items (at least one), citing
	// them by id as "[#id]" where it uses them. The engine appends the list
	// of every member, so the text need not repeat it.
	Summarize(ctx context.Context, items []SummaryItem) (string, error)
}

// SummarizerDriver is how a summarizer package registers itself; see
// BackendDriver.
type SummarizerDriver struct {
	NewConfig func() any
	Open      func(ctx context.Context, cfg any) (Summarizer, error)
}

var summarizers = registry[SummarizerDriver]{kind: "Summarizer"}

// RegisterSummarizer makes a summarizer available by name; see RegisterBackend.
func RegisterSummarizer(name string, d SummarizerDriver) { summarizers.register(name, d) }

// LookupSummarizer returns the summarizer registered as name, or ErrUnknownName.
func LookupSummarizer(name string) (SummarizerDriver, error) { return summarizers.lookup(name) }

// SummarizerNames lists the registered summarizers, sorted.
func SummarizerNames() []string { return summarizers.names() }

// NewSummarizerDriver adapts a summarizer package's typed Open to the
// registry; see NewBackendDriver.
func NewSummarizerDriver[C any, S Summarizer](name string, open func(context.Context, C) (S, error)) SummarizerDriver {
	return SummarizerDriver{
		NewConfig: func() any { return new(C) },
		Open: func(ctx context.Context, cfg any) (Summarizer, error) {
			c, err := typedConfig[C](name, cfg)
			if err != nil {
				return nil, err
			}
			s, err := open(ctx, c)
			if err != nil {
				return nil, err
			}
			return s, nil
		},
	}
}

package driver

import "context"

// Reranker scores candidate texts against a query, typically with a
// cross-encoder that reads the two together and so judges relevance better
// than the retrievers that proposed the candidates. It must be safe for
// concurrent use.
type Reranker interface {
	// Rerank returns one score per text, in the order of texts: higher means
	// more relevant to query. Scores need only be comparable within one call
	// (a raw logit or a probability both do). The texts slice is the
	// caller's; a Reranker must not keep it. An error means no score is
	// usable; the engine then keeps its own order.
	Rerank(ctx context.Context, query string, texts []string) ([]float64, error)
}

// RerankerDriver is how a reranker package registers itself; see
// BackendDriver.
type RerankerDriver struct {
	NewConfig func() any
	Open      func(ctx context.Context, cfg any) (Reranker, error)
}

var rerankers = registry[RerankerDriver]{kind: "Reranker"}

// RegisterReranker makes a reranker available by name; see RegisterBackend.
func RegisterReranker(name string, d RerankerDriver) { rerankers.register(name, d) }

// LookupReranker returns the reranker registered as name, or ErrUnknownName.
func LookupReranker(name string) (RerankerDriver, error) { return rerankers.lookup(name) }

// RerankerNames lists the registered rerankers, sorted.
func RerankerNames() []string { return rerankers.names() }

// NewRerankerDriver adapts a reranker package's typed Open to the registry;
// see NewBackendDriver.
func NewRerankerDriver[C any, R Reranker](name string, open func(context.Context, C) (R, error)) RerankerDriver {
	return RerankerDriver{
		NewConfig: func() any { return new(C) },
		Open: func(ctx context.Context, cfg any) (Reranker, error) {
			c, err := typedConfig[C](name, cfg)
			if err != nil {
				return nil, err
			}
			r, err := open(ctx, c)
			if err != nil {
				return nil, err
			}
			return r, nil
		},
	}
}

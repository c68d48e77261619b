package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/memos-go/memos/core"
)

// Rerank counts what the configured reranker did during one run's queries.
// A call that failed (an error or a timeout) left that search in its fused
// order, so when Failed is not 0 the run's figures mix reranked and
// unreranked searches.
type Rerank struct {
	Calls  int64 `json:"calls"`
	Failed int64 `json:"failed"`
}

// countingReranker is the reranker every engine of a run shares: it counts
// calls and failures, and hides Close from the engines (the run closes it).
type countingReranker struct {
	r             core.Reranker
	calls, failed atomic.Int64
}

func (c *countingReranker) Rerank(ctx context.Context, query string, texts []string) ([]float64, error) {
	c.calls.Add(1)
	s, err := c.r.Rerank(ctx, query, texts)
	if err != nil {
		c.failed.Add(1)
	}
	return s, err
}

func (c *countingReranker) counts() Rerank {
	return Rerank{Calls: c.calls.Load(), Failed: c.failed.Load()}
}

func (c *countingReranker) close() error {
	if cl, ok := c.r.(io.Closer); ok {
		return cl.Close()
	}
	return nil
}

// RerankerError reports a reranker that would not open with its settings
// (Config.RerankerConfig) or did not answer a first call, so that a
// front-end can say where its settings come from.
type RerankerError struct {
	Name string
	Err  error
}

func (e *RerankerError) Error() string {
	return fmt.Sprintf("bench: reranker %s: %v", e.Name, e.Err)
}

func (e *RerankerError) Unwrap() error { return e.Err }

// openReranker opens cfg.Reranker (nil when none is named) and asks it once,
// so that a reranker that is down fails the benchmark at the start instead
// of leaving every search in its fused order.
func openReranker(ctx context.Context, cfg Config) (*countingReranker, error) {
	if cfg.Reranker == "" {
		return nil, nil
	}
	d, err := core.LookupReranker(cfg.Reranker)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	rc := cfg.RerankerConfig
	if rc == nil {
		rc = d.NewConfig()
	}
	r, err := d.Open(ctx, rc)
	if err != nil {
		return nil, &RerankerError{Name: cfg.Reranker, Err: err}
	}
	c := &countingReranker{r: r}
	timeout := cfg.Search.RerankTimeout
	if timeout <= 0 {
		timeout = core.DefaultSearchConfig().RerankTimeout
	}
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if _, err := r.Rerank(pctx, "memos bench", []string{"memos bench checks that the reranker answers"}); err != nil {
		return nil, &RerankerError{Name: cfg.Reranker, Err: errors.Join(fmt.Errorf("first call: %w", err), c.close())}
	}
	return c, nil
}

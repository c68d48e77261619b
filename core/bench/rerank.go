package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/memos-go/memos/core"
)

// Rerank counts what a reranker did during one run's queries. A call that
// failed (an error or a timeout) left that search in its fused order, so
// when Failed is not 0 the run's figures mix reranked and unreranked
// searches.
type Rerank struct {
	Calls  int64 `json:"calls"`
	Failed int64 `json:"failed"`
}

// CountingReranker is a reranker that counts its calls and failures, for a
// measurement that must say whether its searches were reranked. Engines
// that share it do not close it (it has no Close method of its own for
// them to find); its opener calls Close. It is safe for concurrent use.
type CountingReranker struct {
	name          string
	r             core.Reranker
	calls, failed atomic.Int64
}

// Rerank calls the reranker and counts the call.
func (c *CountingReranker) Rerank(ctx context.Context, query string, texts []string) ([]float64, error) {
	c.calls.Add(1)
	s, err := c.r.Rerank(ctx, query, texts)
	if err != nil {
		c.failed.Add(1)
	}
	return s, err
}

// Name is the registered name it was opened by.
func (c *CountingReranker) Name() string { return c.name }

// Counts returns the calls and failures so far.
func (c *CountingReranker) Counts() Rerank {
	return Rerank{Calls: c.calls.Load(), Failed: c.failed.Load()}
}

// Shutdown closes the reranker (a plugin's process, say).
func (c *CountingReranker) Shutdown() error {
	if cl, ok := c.r.(io.Closer); ok {
		return cl.Close()
	}
	return nil
}

// RerankerError reports a reranker that would not open with its settings
// or did not answer a first call, so that a front-end can say where its
// settings come from.
type RerankerError struct {
	Name string
	Err  error
}

func (e *RerankerError) Error() string {
	return fmt.Sprintf("bench: reranker %s: %v", e.Name, e.Err)
}

func (e *RerankerError) Unwrap() error { return e.Err }

// OpenReranker opens the reranker registered as name with cfg (nil: the
// driver's zero config) and asks it once, within timeout (0: the default
// search.rerank_timeout), so that a reranker that is down fails a
// measurement at its start instead of leaving every search in its fused
// order.
func OpenReranker(ctx context.Context, name string, cfg any, timeout time.Duration) (*CountingReranker, error) {
	d, err := core.LookupReranker(name)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	if cfg == nil {
		cfg = d.NewConfig()
	}
	r, err := d.Open(ctx, cfg)
	if err != nil {
		return nil, &RerankerError{Name: name, Err: err}
	}
	c := &CountingReranker{name: name, r: r}
	if timeout <= 0 {
		timeout = core.DefaultSearchConfig().RerankTimeout
	}
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if _, err := r.Rerank(pctx, "memos bench", []string{"memos bench checks that the reranker answers"}); err != nil {
		return nil, &RerankerError{Name: name, Err: errors.Join(fmt.Errorf("first call: %w", err), c.Shutdown())}
	}
	return c, nil
}

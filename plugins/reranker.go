package plugins

import (
	"context"
	"fmt"
	"io"
	"math"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/plugins/internal/shim"
)

func init() {
	driver.RegisterReranker(Name, driver.NewRerankerDriver("plugin reranker", OpenReranker))
}

// Reranker runs a reranker plugin out of process and is itself a
// driver.Reranker. It is safe for concurrent use.
//
// Rerank sends the caller's context with the call (the search's
// rerank_timeout therefore reaches the plugin), bounds it by CallTimeout,
// and checks the answer: one finite score per text. When the plugin process
// dies during a call, Rerank starts a new process and retries once. Every
// failure is an error: the engine then keeps its fused order and logs a
// warning, so a broken reranker never fails a search. Close (or KillAll)
// ends the process.
type Reranker struct {
	h *host
}

var (
	_ driver.Reranker = (*Reranker)(nil)
	_ io.Closer       = (*Reranker)(nil)
)

// OpenReranker starts the reranker plugin cfg.Path and completes the
// handshake. Errors are those of Open; a binary that serves no reranker (an
// embedder plugin, say) is refused with driver.ErrInvalid.
func OpenReranker(ctx context.Context, cfg Config) (*Reranker, error) {
	h, err := openHost(ctx, cfg, KindReranker, nil)
	if err != nil {
		return nil, err
	}
	h.log.Debug("reranker plugin started")
	return &Reranker{h: h}, nil
}

// Rerank implements driver.Reranker. An empty texts gets an empty answer
// without a call.
func (r *Reranker) Rerank(ctx context.Context, query string, texts []string) ([]float64, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("plugin %s: rerank: %w", r.h.name, err)
	}
	if _, err := r.h.current(); err != nil {
		return nil, err
	}
	if len(texts) == 0 {
		return []float64{}, nil
	}
	var scores []float64
	err := r.h.call(ctx, "rerank", func(ctx context.Context, p *proc) (err error) {
		scores, err = p.rpc.(*shim.RerankerClient).Rerank(ctx, query, texts)
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(scores) != len(texts) {
		return nil, fmt.Errorf("%w: plugin %s returned %d scores for %d texts", driver.ErrUnavailable, r.h.name, len(scores), len(texts))
	}
	for i, s := range scores {
		if math.IsNaN(s) || math.IsInf(s, 0) {
			return nil, fmt.Errorf("%w: plugin %s returned the score %v for text %d, not a finite number", driver.ErrUnavailable, r.h.name, s, i)
		}
	}
	return scores, nil
}

// Close ends the plugin process, as Embedder.Close does.
func (r *Reranker) Close() error { return r.h.Close() }

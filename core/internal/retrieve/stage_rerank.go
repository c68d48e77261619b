package retrieve

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"sort"
	"time"

	"github.com/memos-go/memos/core/driver"
)

// rerank lets the configured Reranker reorder the best RerankTop live
// candidates (after fusion, weighting and the gate, before expansion). The
// reranker decides the order only: the scores those candidates had are
// handed out again in the reranker's order, so a candidate past the top N,
// an expansion's seed score and MMR's relevance keep the scale of the fused
// and weighted scores. Ties in the reranker's scores keep the prior order.
//
// A reranker that fails, times out (RerankTimeout) or answers with the wrong
// number of scores leaves the order as it was: the search goes on, with a
// warning in the log and a note in the explanation. Only the caller's own
// cancellation ends the search with an error. After RerankPauseAfter
// failures in a row, searches skip the reranker for RerankPause, then try it
// again (one search at a time) until it answers.
func (p *Pipeline) rerank(ctx context.Context) error {
	r := p.d.Reranker
	if r == nil || p.mode == ModeFTS || p.cfg.RerankTop <= 0 {
		return nil
	}
	var top []*candidate
	for _, c := range p.cands {
		if len(top) == p.cfg.RerankTop {
			break
		}
		if c.live() {
			top = append(top, c)
		}
	}
	if len(top) == 0 {
		return nil
	}
	texts := make([]string, len(top))
	for i, c := range top {
		texts[i] = c.mem.Content
	}
	br := p.d.Breaker
	if ok, why := br.allow(p.d.Now(), p.cfg.RerankPauseAfter); !ok {
		p.rerankNote = "reranker skipped, kept the fused order: " + why
		return nil
	}
	scores, err := callReranker(ctx, r, p.req.Query, texts, p.cfg.RerankTimeout)
	if err != nil && ctx.Err() != nil {
		br.abandon()
		return fmt.Errorf("rerank: %w", ctx.Err())
	}
	opened, closed := br.done(err, p.d.Now(), p.cfg.RerankPauseAfter, p.cfg.RerankPause)
	if closed {
		slog.Info("memos: the reranker answers again; searches use it")
	}
	if err != nil {
		p.rerankNote = fmt.Sprintf("reranker failed, kept the fused order: %v", err)
		slog.Warn("memos: the reranker failed; search results keep the fused order", "query", p.req.Query, "err", err)
		if opened {
			slog.Warn("memos: the reranker failed too often in a row; searches skip it for a while",
				"failures", p.cfg.RerankPauseAfter, "pause", p.cfg.RerankPause)
		}
		return nil
	}
	old := make([]float64, len(top))
	for i, c := range top {
		old[i] = c.score
		c.rerank, c.reranked = scores[i], true
	}
	sort.SliceStable(top, func(i, j int) bool { return top[i].rerank > top[j].rerank })
	// old is in descending order (p.cands was sorted); keep it strictly
	// descending so that sorting by score, then id, cannot undo the
	// reranker's order between equal scores.
	for i, c := range top {
		s := old[i]
		if i > 0 && s >= top[i-1].score {
			s = math.Nextafter(top[i-1].score, math.Inf(-1))
		}
		c.score = s
	}
	sortCandidates(p.cands)
	p.rerankNote = fmt.Sprintf("reranked the top %d", len(top))
	return nil
}

// callReranker asks r for one finite score per text within timeout.
func callReranker(ctx context.Context, r driver.Reranker, query string, texts []string, timeout time.Duration) ([]float64, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	scores, err := r.Rerank(ctx, query, texts)
	if err != nil {
		// A plugin sees the same deadline and may end the call a moment
		// before this context's timer fires: past the deadline, it is the
		// timeout whatever the error says.
		if dl, _ := ctx.Deadline(); ctx.Err() == context.DeadlineExceeded || !time.Now().Before(dl) {
			return nil, fmt.Errorf("no answer within search.rerank_timeout (%v): %w", timeout, err)
		}
		return nil, err
	}
	if len(scores) != len(texts) {
		return nil, fmt.Errorf("%d scores for %d texts", len(scores), len(texts))
	}
	for i, s := range scores {
		if math.IsNaN(s) || math.IsInf(s, 0) {
			return nil, fmt.Errorf("score %d is %v, not a finite number", i, s)
		}
	}
	return scores, nil
}

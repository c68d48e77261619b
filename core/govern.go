package core

import (
	"context"

	"github.com/memos-go/memos/core/internal/govern"
)

// Governance — the quarantine policy, the contradiction and secret
// detectors, lessons' scoring, forget-source's closure and the audit
// chain — lives in core/internal/govern, over the backend's transactions;
// the files here are the engine's facade over it.

// GovernConfig is the governance policy: which writes wait in the review
// queue (status quarantined, invisible to recall until a person releases
// them), how contradictions are detected and handled, and how lesson
// outcomes demote and archive a lesson. The zero value takes the defaults
// documented on each field.
type GovernConfig = govern.Config

// The contradiction policies of GovernConfig.Contradictions.
const (
	ContradictQuarantine = govern.ContradictQuarantine
	ContradictDemote     = govern.ContradictDemote
	ContradictFlag       = govern.ContradictFlag
	ContradictOff        = govern.ContradictOff
)

// SourceMatches reports whether source is s or starts with s followed by a
// character that cannot continue a name (anything but a letter, digit, _ or
// -): "conversation:7" matches "conversation:7" and "conversation:7#turn-3"
// but not "conversation:70". This is how forget-source reads its argument.
func SourceMatches(source, s string) bool { return govern.SourceMatches(source, s) }

// nearest is the contradiction detector's view of the vector index: the
// active memories in scope nearest to a vector, after a sync with the
// store; nil without an index.
func nearest(s *shared, scope []string) govern.Nearest {
	if s.emb == nil { // no vectors
		return nil
	}
	return func(ctx context.Context, q []float32, k int) ([]Hit, error) {
		if err := s.vec.Sync(ctx); err != nil {
			return nil, err
		}
		return s.vec.Search(ctx, q, k, VectorFilter{Namespaces: scope})
	}
}

package core

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/memos-go/memos/core/internal/vecsync"
	"github.com/memos-go/memos/core/vector"
)

// The vector index, its snapshot, the background sync with the change log,
// the switch of "auto" to HNSW and the embedding cache live in
// core/internal/vecsync; this file holds their public names.

// VectorIndexNames lists the values Options.VectorIndex accepts.
func VectorIndexNames() []string { return []string{"auto", "exact", "hnsw"} }

// ValidateVectorIndex checks that name is one of VectorIndexNames (or empty,
// meaning exact).
func ValidateVectorIndex(name string) error {
	if name == "" || slices.Contains(VectorIndexNames(), name) {
		return nil
	}
	return fmt.Errorf("%w: no vector index named %q (known: %s)", ErrUnknownName, name, strings.Join(VectorIndexNames(), ", "))
}

// VectorPrecisionNames lists the values Options.VectorPrecision accepts.
func VectorPrecisionNames() []string { return vector.PrecisionNames() }

// ValidateVectorPrecision checks that name is one of VectorPrecisionNames
// (or empty, meaning float32).
func ValidateVectorPrecision(name string) error {
	_, err := vector.ParsePrecision(name)
	return err
}

// DefaultHNSWThreshold is the store size from which VectorIndex "auto"
// chooses HNSW. Measured on the dev turns (BenchmarkWordvecCrossover in
// core/vector/hnsw, CPU time per query), HNSW at its default EfSearch
// overtakes the exact scan near 25k vectors with wordvec embeddings and is
// 2.4× cheaper at 50k (recall@10 0.997); with the hash embedder it is 1.8×
// cheaper at 50k at recall 0.957, and only there does it match the exact
// scan's cost at recall 0.97 (ef 600). See the README's Vector index section.
const DefaultHNSWThreshold = 50_000

// DefaultHNSWMinRecall is the recall@10 against the exact index that an
// HNSW graph built by VectorIndex "auto" must reach on the store's own
// vectors to replace it.
const DefaultHNSWMinRecall = 0.97

// openVectors opens the vector index of a store whose embedding model is
// model (zero without an embedder: no index, only the snapshot file to
// remove on Forget), as opts and the parsed precision say.
func openVectors(ctx context.Context, b Backend, model ModelInfo, opts Options, prec vector.Precision) (*vecsync.Index, error) {
	cfg := vecsync.Config{Precision: prec, Snapshot: opts.VectorSnapshot}
	if model.ID != "" {
		if err := ValidateVectorIndex(opts.VectorIndex); err != nil {
			return nil, err
		}
		cfg.Model, cfg.Index, cfg.MinRecall = model, opts.VectorIndex, DefaultHNSWMinRecall
		cfg.Threshold = opts.HNSWThreshold
		if cfg.Threshold <= 0 {
			cfg.Threshold = DefaultHNSWThreshold
		}
	}
	return vecsync.Open(ctx, b, cfg)
}

package check

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/memos-go/memos/core/driver"
)

// Metadata checks free metadata: valid UTF-8 at any depth, JSON-encodable,
// at most 16 KiB of JSON.
func Metadata(md map[string]any) error {
	if md == nil {
		return nil
	}
	if err := valueUTF8("metadata", md); err != nil {
		return err
	}
	b, err := json.Marshal(md)
	if err != nil {
		return driver.Invalidf("metadata is not JSON-encodable: %v", err)
	}
	if len(b) > 16<<10 {
		return driver.Invalidf("metadata is %d bytes of JSON, over the limit of 16384", len(b))
	}
	return nil
}

// Edge applies the defaults (type relates_to, weight 1) and checks
// the edge's type, ends and weight.
func Edge(edge *driver.Edge) error {
	if edge.Type == "" {
		edge.Type = driver.EdgeRelatesTo
	}
	if err := driver.ValidateEdgeType(edge.Type); err != nil {
		return err
	}
	if edge.From == edge.To {
		return driver.Invalidf("a memory cannot be linked to itself")
	}
	if edge.Weight == 0 {
		edge.Weight = 1
	}
	if edge.Weight < 0 || math.IsNaN(edge.Weight) || math.IsInf(edge.Weight, 0) {
		return driver.Invalidf("edge weight %v must be a positive number", edge.Weight)
	}
	return nil
}

// Vectors enforces the embedder contract of model on one batch of n
// vectors and normalises it.
func Vectors(model driver.ModelInfo, vs [][]float32, n int) error {
	if len(vs) != n {
		return fmt.Errorf("embedder returned %d vectors for %d texts", len(vs), n)
	}
	for i, v := range vs {
		if len(v) != model.Dim {
			return fmt.Errorf("%w: embedder returned a vector of %d dimensions, model %s declares %d", driver.ErrDimensionMismatch, len(v), model.ID, model.Dim)
		}
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return fmt.Errorf("embedder returned a non-finite value in vector %d", i)
			}
		}
		driver.Normalize(v) // a zero vector stays zero: it matches nothing
	}
	return nil
}

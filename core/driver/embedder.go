package driver

import "context"

// Embedder turns texts into vectors. Implementations must be safe for
// concurrent use and deterministic enough that the same text gives the same
// vector alone and inside a batch.
type Embedder interface {
	// Info describes the model. It must not change while the embedder is open.
	Info(ctx context.Context) (ModelInfo, error)
	// Embed returns one vector per text, in order, each of Info().Dim floats.
	// Callers never pass more than Info().MaxBatch texts (0 means no limit);
	// an empty batch returns an empty result. An empty string must embed
	// without error.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// ModelInfo describes an embedding model.
type ModelInfo struct {
	// ID names the model and its parameters, e.g. "hash-v1-256"; memos
	// records it with every vector and refuses to mix models in one store.
	ID         string `json:"id"`
	Dim        int    `json:"dim"`
	MaxBatch   int    `json:"max_batch"`  // 0 means no limit
	Normalized bool   `json:"normalized"` // vectors are unit length
}

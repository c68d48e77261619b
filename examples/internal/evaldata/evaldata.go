// Package evaldata is what the evaluation examples share: the LoCoMo dev
// conversations and the embedders they are measured with, both read from the
// shared data directory (../shared/data, never copied into the repository).
package evaldata

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/core/bench/dataset"
	"github.com/memos-go/memos/embedders/hash"
	"github.com/memos-go/memos/embedders/wordvec"
)

// LoCoMo loads locomo/locomo-dev.json from the data directory; a missing
// file is an error wrapping fs.ErrNotExist.
func LoCoMo(data string) (*dataset.Dataset, error) {
	return dataset.LoadLoCoMo(filepath.Join(data, "locomo", "locomo-dev.json"), dataset.Options{})
}

// Embedder opens "hash" (built in) or "wordvec" (GloVe from the data
// directory).
func Embedder(ctx context.Context, data, name string) (core.Embedder, error) {
	switch name {
	case "hash":
		return hash.Open(ctx, hash.Config{})
	case "wordvec":
		return wordvec.Open(ctx, wordvec.Config{Path: filepath.Join(data, "glove", "glove-6b-100d-top100k.txt.gz")})
	}
	return nil, fmt.Errorf("unknown embedder %q (want hash or wordvec)", name)
}

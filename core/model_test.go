package core_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memos-go/memos/backends/sqlite"
	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/embedders/hash"
)

// renamed is the hash embedder under another model id: same dimension,
// other vectors as far as the store can tell.
type renamed struct {
	*hash.Embedder
	id string
}

func (r renamed) Info(ctx context.Context) (core.ModelInfo, error) {
	info, err := r.Embedder.Info(ctx)
	info.ID = r.id
	return info, err
}

// A store embedded with another model of the same dimension is refused as a
// model mismatch, not a dimension mismatch.
func TestSameDimensionModelMismatch(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	e := openAt(t, path, core.Options{})
	remember(t, e, core.Input{Content: "embedded with hash-v1-256"})
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := sqlite.Open(ctx, sqlite.Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	h, err := hash.Open(ctx, hash.Config{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = core.Open(ctx, core.Options{Backend: b, Embedder: renamed{h, "other-model-256"}})
	if !errors.Is(err, core.ErrModelMismatch) || !errors.Is(err, core.ErrDimensionMismatch) {
		t.Fatalf("open with another model: %v; want ErrModelMismatch (which is also an ErrDimensionMismatch)", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, "model mismatch") || strings.Contains(msg, "dimension mismatch") ||
		!strings.Contains(msg, "hash-v1-256") || !strings.Contains(msg, "other-model-256") {
		t.Fatalf("message %q: want a model mismatch naming both models", msg)
	}
	if k := core.KindOf(err); k.Name != "model_mismatch" || k.ExitCode != 4 || k.HTTP != 409 {
		t.Fatalf("kind = %+v; want model_mismatch, exit 4, HTTP 409", k)
	}
	if k := core.KindOf(core.ErrDimensionMismatch); k.Name != "dimension_mismatch" {
		t.Fatalf("a plain dimension mismatch is kind %q", k.Name)
	}
}

package core_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/memos-go/memos/backends/sqlite"
	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/embedders/hash"
)

// The README's library example: open a store, remember, search.
func ExampleEngine() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "memos-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	b, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(dir, "memory.db")})
	if err != nil {
		log.Fatal(err)
	}
	emb, err := hash.Open(ctx, hash.Config{})
	if err != nil {
		log.Fatal(err)
	}
	eng, err := core.Open(ctx, core.Options{Backend: b, Embedder: emb})
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close()

	for _, in := range []core.Input{
		{Content: "Alice prefers open-source tools", Type: core.TypePreference},
		{Content: "The staging cluster runs in Frankfurt", Type: core.TypeFact},
	} {
		if _, err := eng.Remember(ctx, in); err != nil {
			log.Fatal(err)
		}
	}
	res, err := eng.Search(ctx, core.SearchRequest{Query: "what does alice like"})
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range res.Hits {
		fmt.Printf("%d %s: %s\n", h.Memory.ID, h.Memory.Type, h.Memory.Content)
	}
	// Output:
	// 1 preference: Alice prefers open-source tools
}

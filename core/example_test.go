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

// The README's library example: open a store scoped to a namespace,
// remember, search, and build a context pack for a prompt.
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
	eng, err := core.Open(ctx, core.Options{Backend: b, Embedder: emb, Namespace: "project:infra"})
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
	pk, err := eng.ContextPack(ctx, core.PackRequest{Query: "where does staging run", Budget: 400})
	if err != nil {
		log.Fatal(err)
	}
	// pk.Markdown() is the cited text to put in front of a prompt.
	fmt.Printf("pack for %s: %d memory, #%d %q, within %d tokens: %v\n",
		pk.Namespace, len(pk.Memories), pk.Memories[0].ID, pk.Memories[0].Content, pk.Budget, pk.Tokens <= pk.Budget)
	// Output:
	// 1 preference: Alice prefers open-source tools
	// pack for project:infra: 1 memory, #2 "The staging cluster runs in Frankfurt", within 400 tokens: true
}

package vector_test

import (
	"context"
	"fmt"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/vector"
)

func ExampleExact() {
	ctx := context.Background()
	idx := vector.NewExact(3)
	_ = idx.Add(ctx,
		driver.VectorEntry{ID: 1, Namespace: "default", Pool: driver.PoolMemory, Vector: []float32{1, 0, 0}},
		driver.VectorEntry{ID: 2, Namespace: "user:alice", Pool: driver.PoolMemory, Vector: []float32{1, 1, 0}},
		driver.VectorEntry{ID: 3, Namespace: "user:bob", Pool: driver.PoolMemory, Vector: []float32{0, 0, 1}},
	)
	// Alice's scope: her namespace and the shared default one.
	f := driver.VectorFilter{Namespaces: []string{"user:alice", driver.DefaultNamespace}}
	hits, err := idx.Search(ctx, []float32{2, 1, 0}, 5, f)
	if err != nil {
		panic(err)
	}
	for _, h := range hits {
		fmt.Printf("id %d: %.3f\n", h.ID, h.Score)
	}
	// Output:
	// id 2: 0.949
	// id 1: 0.894
}

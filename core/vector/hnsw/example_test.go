package hnsw_test

import (
	"bytes"
	"context"
	"fmt"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/vector/hnsw"
)

func Example() {
	ctx := context.Background()
	ix, err := hnsw.New(3, hnsw.Config{})
	if err != nil {
		panic(err)
	}
	err = ix.Add(ctx,
		driver.VectorEntry{ID: 1, Namespace: "default", Pool: driver.PoolMemory, Vector: []float32{1, 0, 0}},
		driver.VectorEntry{ID: 2, Namespace: "user:alice", Pool: driver.PoolMemory, Vector: []float32{0.9, 0.1, 0}},
		driver.VectorEntry{ID: 3, Namespace: "user:alice", Pool: driver.PoolRaw, Vector: []float32{0, 1, 0}},
	)
	if err != nil {
		panic(err)
	}
	hits, _ := ix.Search(ctx, []float32{1, 0, 0}, 2, driver.VectorFilter{Namespaces: []string{"user:alice"}})
	for _, h := range hits {
		fmt.Printf("%d %.3f\n", h.ID, h.Score)
	}

	// Save and reopen without rebuilding the graph.
	var buf bytes.Buffer
	if err := ix.Save(&buf); err != nil {
		panic(err)
	}
	again, err := hnsw.Load(&buf)
	if err != nil {
		panic(err)
	}
	fmt.Println(again.Len())
	// Output:
	// 2 0.994
	// 3 0.000
	// 3
}

package hash_test

import (
	"context"
	"fmt"

	"github.com/memos-go/memos/embedders/hash"
)

func Example() {
	ctx := context.Background()
	e, err := hash.Open(ctx, hash.Config{}) // zero Config: 256 dimensions
	if err != nil {
		panic(err)
	}
	info, _ := e.Info(ctx)
	vs, err := e.Embed(ctx, []string{
		"Alice prefers open-source tools",
		"alice likes open source software",
		"stock prices fell",
	})
	if err != nil {
		panic(err)
	}
	cos := func(a, b []float32) (s float32) {
		for i := range a {
			s += a[i] * b[i]
		}
		return s
	}
	fmt.Println(info.ID, len(vs[0]))
	fmt.Println("shared words:", cos(vs[0], vs[1]) > cos(vs[0], vs[2]))
	// Output:
	// hash-v1-256 256
	// shared words: true
}

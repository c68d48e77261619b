package embedtest_test

import (
	"context"
	"fmt"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/embedtest"
)

// lengths embeds a text as its length in runes: deterministic and fast,
// but its vectors are not unit length although it claims so.
type lengths struct{}

func (lengths) Info(context.Context) (driver.ModelInfo, error) {
	return driver.ModelInfo{ID: "lengths-v1", Dim: 1, Normalized: true}, nil
}

func (lengths) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([][]float32, len(texts))
	for i, s := range texts {
		out[i] = []float32{float32(len([]rune(s)))}
	}
	return out, nil
}

// Check runs the conformance cases outside `go test`, as `memos plugin
// test` does, and reports each case.
func ExampleCheck() {
	for _, r := range embedtest.Check(context.Background(), lengths{}) {
		status := "ok  "
		if !r.Passed() {
			status = "FAIL"
		}
		fmt.Println(status, r.Name)
	}
	// Output:
	// ok   info is stable
	// ok   info is valid
	// ok   batch output length equals input length
	// ok   dimensions match the declared ones
	// FAIL vectors are finite and normalised when declared so
	// ok   same text gives the same vector alone and in a batch
	// ok   empty batch returns an empty result
	// ok   empty string embeds
	// ok   cancelled context returns a context error
}

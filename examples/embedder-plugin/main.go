// Command embedder-plugin is a complete memos embedder plugin: it embeds a
// text as hashed character trigrams, so "colour" and "color" land close.
// Replace Embed with a call to your own model. See README.md.
package main

import (
	"context"
	"hash/fnv"
	"math"
	"strings"

	"github.com/memos-go/memos/plugins/sdk"
)

const dim = 256

type trigrams struct{}

func (trigrams) Info(context.Context) (sdk.ModelInfo, error) {
	return sdk.ModelInfo{ID: "trigrams-v1-256", Dim: dim, Normalized: true}, nil
}

func (trigrams) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err // the host cancelled: stop early
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, dim)
		s := "  " + strings.ToLower(t) + " " // padded: even "" has a trigram
		for j := 0; j+3 <= len(s); j++ {
			h := fnv.New32a()
			h.Write([]byte(s[j : j+3]))
			v[h.Sum32()%dim]++
		}
		var n float64
		for _, x := range v {
			n += float64(x * x)
		}
		for k := range v {
			v[k] /= float32(math.Sqrt(n))
		}
		out[i] = v
	}
	return out, nil
}

func main() { sdk.Serve(trigrams{}) }

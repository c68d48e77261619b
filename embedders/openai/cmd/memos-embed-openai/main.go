// Command memos-embed-openai serves the openai embedder as a memos plugin.
// Flags mirror openai.Config; the API key comes from the environment
// variable named by -api-key-env (set it, or pass it with the plugin's env).
//
//	embedder: {name: plugin, plugin: {path: memos-embed-openai, args: ["-model", "text-embedding-3-small"]}}
package main

import (
	"context"
	"flag"
	"os"

	"github.com/memos-go/memos/embedders/openai"
	"github.com/memos-go/memos/plugins/sdk"
)

func main() {
	var c openai.Config
	flag.StringVar(&c.BaseURL, "base-url", openai.DefaultBaseURL, "API root, up to and including /v1")
	flag.StringVar(&c.Model, "model", openai.DefaultModel, "embedding model")
	flag.IntVar(&c.Dimensions, "dimensions", 0, "vector size to ask for (0: the model's)")
	flag.StringVar(&c.APIKeyEnv, "api-key-env", openai.DefaultAPIKeyEnv, "environment variable holding the API key")
	flag.IntVar(&c.Batch, "batch", openai.DefaultBatch, "most texts per request")
	flag.IntVar(&c.MaxRetries, "max-retries", openai.DefaultMaxRetries, "retries on 429 and 5xx (negative: none)")
	flag.DurationVar(&c.Timeout, "timeout", openai.DefaultTimeout, "timeout of one request")
	flag.Parse()
	e, err := openai.Open(context.Background(), c)
	if err != nil {
		sdk.Logger().Error("memos-embed-openai: cannot start", "error", err)
		os.Exit(1)
	}
	sdk.Serve(e)
}

// Command memos-embed-ollama serves the ollama embedder as a memos plugin.
// Flags mirror ollama.Config:
//
//	embedder: {name: plugin, plugin: {path: memos-embed-ollama, args: ["-model", "nomic-embed-text"]}}
package main

import (
	"context"
	"flag"
	"os"

	"github.com/memos-go/memos/embedders/ollama"
	"github.com/memos-go/memos/plugins/sdk"
)

func main() {
	var c ollama.Config
	flag.StringVar(&c.BaseURL, "base-url", ollama.DefaultBaseURL, "Ollama server")
	flag.StringVar(&c.Model, "model", ollama.DefaultModel, "embedding model")
	flag.StringVar(&c.KeepAlive, "keep-alive", "", `how long Ollama keeps the model loaded ("5m", "-1")`)
	flag.IntVar(&c.Batch, "batch", ollama.DefaultBatch, "most texts per request")
	flag.DurationVar(&c.Timeout, "timeout", ollama.DefaultTimeout, "timeout of one request")
	flag.IntVar(&c.Dim, "dim", 0, "the model's dimension (0: ask the server once)")
	flag.Parse()
	e, err := ollama.Open(context.Background(), c)
	if err != nil {
		sdk.Logger().Error("memos-embed-ollama: cannot start", "error", err)
		os.Exit(1)
	}
	sdk.Serve(e)
}

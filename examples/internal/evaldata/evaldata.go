// Package evaldata is what the evaluation examples share: the LoCoMo dev
// conversations and the embedders they are measured with, both read from the
// shared data directory (../shared/data, never copied into the repository).
package evaldata

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "github.com/memos-go/memos/backends/sqlite" // with extract and summarize: what the configuration's defaults name
	"github.com/memos-go/memos/cmd/memos/config"
	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/core/bench"
	"github.com/memos-go/memos/core/bench/dataset"
	_ "github.com/memos-go/memos/core/provider/extract"
	_ "github.com/memos-go/memos/core/provider/rerank" // the http reranker
	_ "github.com/memos-go/memos/core/provider/summarize"
	"github.com/memos-go/memos/embedders/hash"
	_ "github.com/memos-go/memos/embedders/ollama"
	_ "github.com/memos-go/memos/embedders/openai"
	"github.com/memos-go/memos/embedders/wordvec"
	_ "github.com/memos-go/memos/plugins" // the plugin embedder and reranker
)

// LoCoMo loads locomo/locomo-dev.json from the data directory; a missing
// file is an error wrapping fs.ErrNotExist.
func LoCoMo(data string) (*dataset.Dataset, error) {
	return dataset.LoadLoCoMo(filepath.Join(data, "locomo", "locomo-dev.json"), dataset.Options{})
}

// Embedder opens the embedder registered as name: "hash" (built in) and
// "wordvec" (GloVe from the data directory) as they are measured in the
// README; any other (ollama, openai, plugin) with its settings from the
// memos configuration, as memos bench reads them (embedder.<name>.* in
// $MEMOS_HOME/config.yaml or MEMOS_EMBEDDER__<NAME>__* variables).
func Embedder(ctx context.Context, data, name string) (core.Embedder, error) {
	switch name {
	case "hash":
		return hash.Open(ctx, hash.Config{})
	case "wordvec":
		return wordvec.Open(ctx, wordvec.Config{Path: filepath.Join(data, "glove", "glove-6b-100d-top100k.txt.gz")})
	}
	d, err := core.LookupEmbedder(name)
	if err != nil {
		return nil, err
	}
	cfg, err := config.Load(config.Options{Env: os.Environ(), Flags: []config.Flag{{Key: "embedder.name", Name: "-embedder", Value: name}}})
	if err != nil {
		return nil, err
	}
	e, err := d.Open(ctx, cfg.EmbedderConfig)
	if err != nil {
		return nil, fmt.Errorf("open embedder %s (settings: embedder.%s.* in %s or MEMOS_EMBEDDER__%s__* variables): %w",
			name, name, cfg.File, strings.ToUpper(name), err)
	}
	return e, nil
}

// Reranker opens the reranker registered as name (http, plugin) with its
// settings from the memos configuration (reranker.<name>.* or
// MEMOS_RERANKER__<NAME>__* variables), checked with one call; "" or
// "none" is no reranker (nil). timeout bounds that call (0: the default).
func Reranker(ctx context.Context, name string, timeout time.Duration) (*bench.CountingReranker, error) {
	if name == "" || name == "none" {
		return nil, nil
	}
	cfg, err := config.Load(config.Options{Env: os.Environ(), Flags: []config.Flag{{Key: "reranker.name", Name: "-reranker", Value: name}}})
	if err != nil {
		return nil, err
	}
	r, err := bench.OpenReranker(ctx, name, cfg.RerankerConfig, timeout)
	if err != nil {
		return nil, fmt.Errorf("%w (settings: reranker.%s.* in %s or MEMOS_RERANKER__%s__* variables)", err, name, cfg.File, strings.ToUpper(name))
	}
	return r, nil
}

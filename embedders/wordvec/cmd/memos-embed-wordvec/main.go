// Command memos-embed-wordvec serves the wordvec embedder as a memos plugin:
//
//	embedder: {name: plugin, plugin: {path: memos-embed-wordvec, args: ["-path", "/data/glove.6B.100d.txt.gz"]}}
package main

import (
	"context"
	"flag"
	"os"

	"github.com/memos-go/memos/embedders/wordvec"
	"github.com/memos-go/memos/plugins/sdk"
)

func main() {
	var c wordvec.Config
	flag.StringVar(&c.Path, "path", "", "GloVe-format word vector file (.txt or .txt.gz)")
	flag.IntVar(&c.Dim, "dim", 0, "expected dimension (0: any)")
	flag.IntVar(&c.MaxWords, "max-words", 0, "keep only the first N words (0: all)")
	flag.StringVar(&c.Freqs, "freqs", "", `optional file of "word count" lines`)
	flag.Parse()
	e, err := wordvec.Open(context.Background(), c)
	if err != nil {
		sdk.Logger().Error("memos-embed-wordvec: cannot start", "error", err)
		os.Exit(1)
	}
	sdk.Serve(e)
}

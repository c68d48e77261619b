// Command docgen writes the references in docs/reference from the code they
// describe, so that they cannot drift from it:
//
//   - cli.md from the cobra command tree (cli.Tree): every command's usage,
//     help text and flags;
//   - config.md from the template `memos init` writes (config.Template):
//     every key with its default, environment variable and the doc comment
//     of the Go field it decodes into;
//   - api.md from the operation table (api.Ops): every operation's HTTP
//     route, MCP tool, description, input fields and output.
//
// Run it from the repository root after changing commands, flags, config
// keys or operations:
//
//	go run ./cmd/memos/internal/docgen
//
// Its test fails while a committed reference differs from what it
// generates, and checks every relative link in README.md and docs/.
//
// It is a program of its own, not a hidden `memos` command, so that the
// memos binary carries no documentation tooling and the generator may read
// the repository's Go sources (for doc comments), which an installed binary
// cannot. It links the same backends and embedders as cmd/memos (a test
// checks the import lists agree), so the references describe that binary.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	_ "github.com/memos-go/memos/plugins" // registers the "plugin" embedder

	_ "github.com/memos-go/memos/backends/bolt"
	_ "github.com/memos-go/memos/backends/postgres"
	_ "github.com/memos-go/memos/backends/sqlite"
	_ "github.com/memos-go/memos/embedders/hash"
	_ "github.com/memos-go/memos/embedders/ollama"
	_ "github.com/memos-go/memos/embedders/openai"
	_ "github.com/memos-go/memos/embedders/wordvec"
)

func main() {
	check := flag.Bool("check", false, "only report stale references (exit 1), write nothing")
	flag.Parse()
	root, err := moduleRoot()
	if err != nil {
		fail(err)
	}
	files, err := generate(root)
	if err != nil {
		fail(err)
	}
	stale := 0
	for _, name := range sortedKeys(files) {
		path := filepath.Join(root, filepath.FromSlash(name))
		old, _ := os.ReadFile(path)
		if bytes.Equal(old, files[name]) {
			continue
		}
		stale++
		if *check {
			fmt.Printf("%s is stale\n", name)
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			fail(err)
		}
		if err := os.WriteFile(path, files[name], 0o644); err != nil {
			fail(err)
		}
		fmt.Printf("wrote %s\n", name)
	}
	if *check && stale > 0 {
		fmt.Println("run `go run ./cmd/memos/internal/docgen` to regenerate")
		os.Exit(1)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "docgen:", err)
	os.Exit(1)
}

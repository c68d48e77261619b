// Command gen writes the generated files of memos' TypeScript and Python
// clients (api/clients/typescript, api/clients/python) from the operation
// table, api.Ops, and the JSON Schemas of its requests and answers (the
// ones /openapi.json publishes): one method per operation, a type per
// request and answer object, an error class per error kind. Run it from
// the module's root after changing the table:
//
//	go run ./api/clients/gen
//
// TestGeneratedFilesAreCurrent fails while the committed files differ from
// what it writes.
package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/memos-go/memos/api"
)

// Generated files, relative to api/clients.
const (
	tsJS  = "typescript/client.js"
	tsDTS = "typescript/client.d.ts"
	pyGen = "python/memos_client/_generated.py"
)

// generate returns the generated files' contents for ops, by path
// relative to api/clients.
func generate(ops []*api.Op) (map[string][]byte, error) {
	m, err := build(ops)
	if err != nil {
		return nil, err
	}
	js, dts := typescript(m)
	return map[string][]byte{tsJS: js, tsDTS: dts, pyGen: python(m)}, nil
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run() error {
	dir, err := clientsDir()
	if err != nil {
		return err
	}
	files, err := generate(api.Ops())
	if err != nil {
		return err
	}
	for path, b := range files {
		p := filepath.Join(dir, filepath.FromSlash(path))
		if old, err := os.ReadFile(p); err == nil && bytes.Equal(old, b) {
			continue
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return err
		}
		fmt.Println("wrote", filepath.Join("api", "clients", filepath.FromSlash(path)))
	}
	return nil
}

// clientsDir finds api/clients from the module root above the working
// directory.
func clientsDir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "api", "clients"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory: run it in the memos module")
		}
		dir = parent
	}
}

package main

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// TestReferencesAreCurrent fails while a committed page of docs/reference
// differs from what the code generates.
func TestReferencesAreCurrent(t *testing.T) {
	root := repoRoot(t)
	files, err := generate(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range sortedKeys(files) {
		old, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
		if err != nil {
			t.Errorf("%s: %v; run `go run ./cmd/memos/internal/docgen` to generate it", name, err)
			continue
		}
		if string(old) != string(files[name]) {
			t.Errorf("%s is stale (%s); run `go run ./cmd/memos/internal/docgen` to regenerate it",
				name, firstDifference(string(old), string(files[name])))
		}
	}
}

// firstDifference describes the first line where got and want differ.
func firstDifference(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return "line " + strconv.Itoa(i+1) + ": committed " + strconv.Quote(clip(gl)) + ", generated " + strconv.Quote(clip(wl))
		}
	}
	return "no line differs"
}

func clip(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}

// TestLinksLikeMemos: docgen compiles in the backends, embedders and
// plugins that cmd/memos does, so the references describe that binary.
func TestLinksLikeMemos(t *testing.T) {
	root := repoRoot(t)
	imports := func(path string) []string {
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if strings.HasPrefix(p, modulePath+"/") && p != modulePath+"/cmd/memos/cli" {
				out = append(out, p)
			}
		}
		slices.Sort(out)
		return out
	}
	memos := imports(filepath.Join(root, "cmd", "memos", "main.go"))
	docgen := imports(filepath.Join(root, "cmd", "memos", "internal", "docgen", "main.go"))
	if !slices.Equal(memos, docgen) {
		t.Errorf("cmd/memos/main.go imports %v but docgen/main.go %v: give docgen the same imports", memos, docgen)
	}
}

// TestReadmeLength keeps the README a five-minute read; details belong in docs/.
func TestReadmeLength(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > 300 {
		t.Errorf("README.md has %d lines, more than 300: move details to a page of docs/ and link it", n)
	}
}

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/memos-go/memos/api"
	"github.com/memos-go/memos/core"
)

// onDisk reads the committed generated files.
func onDisk(t *testing.T) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	for _, p := range []string{tsJS, tsDTS, pyGen} {
		b, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(p)))
		if err != nil {
			t.Fatal(err)
		}
		files[p] = b
	}
	return files
}

// TestGeneratedFilesAreCurrent fails while the committed client files
// differ from what the generator writes for the operation table: after a
// change to an operation, its fields or the error kinds, run
// go run ./api/clients/gen.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	want, err := generate(api.Ops())
	if err != nil {
		t.Fatal(err)
	}
	got := onDisk(t)
	for p, b := range want {
		if !bytes.Equal(got[p], b) {
			t.Errorf("api/clients/%s is not what the generator writes for the operation table: run go run ./api/clients/gen (first difference: %s)", p, firstDiff(got[p], b))
		}
	}
}

// missingMethods lists, per client file, the operations of ops it has no
// method for.
func missingMethods(ops []*api.Op, files map[string][]byte) []string {
	var missing []string
	for _, o := range ops {
		for _, c := range []struct{ file, decl string }{
			{tsJS, "\n  " + camel(o.Name) + "(request, options) {\n"},
			{tsDTS, "\n  " + camel(o.Name) + "(request"},
			{pyGen, "\n    def " + pyParam(snake(o.Name)) + "(\n"},
		} {
			if !bytes.Contains(files[c.file], []byte(c.decl)) {
				missing = append(missing, fmt.Sprintf("%s in %s", o.Name, c.file))
			}
		}
	}
	return missing
}

// TestEveryOperationHasAMethod fails when the operation table has an
// operation that a client (its committed files) has no method for.
func TestEveryOperationHasAMethod(t *testing.T) {
	if m := missingMethods(api.Ops(), onDisk(t)); len(m) > 0 {
		t.Errorf("the clients lack operations of the table: %s; run go run ./api/clients/gen", strings.Join(m, ", "))
	}
}

// TestANewOperationIsNoticed adds an operation to the table the clients
// were generated from: the committed files then lack it, and the generator
// writes a method for it in both languages.
func TestANewOperationIsNoticed(t *testing.T) {
	dummy := &api.Op{Name: "dummy-op", Tool: "memos_dummy_op", Title: "A dummy", Description: "Not an operation.",
		In: reflect.TypeFor[api.HistoryIn](), Out: reflect.TypeFor[core.Stats]()}
	// An answer that is a list, not an object.
	dummyList := &api.Op{Name: "dummy-list", Tool: "memos_dummy_list", Title: "A dummy list", Description: "Not an operation.",
		In: reflect.TypeFor[api.Empty](), Out: reflect.TypeFor[[]core.Edge]()}
	ops := append(slices.Clone(api.Ops()), dummy, dummyList)
	m := missingMethods(ops, onDisk(t))
	want := []string{"dummy-op in " + tsJS, "dummy-op in " + tsDTS, "dummy-op in " + pyGen,
		"dummy-list in " + tsJS, "dummy-list in " + tsDTS, "dummy-list in " + pyGen}
	if !slices.Equal(m, want) {
		t.Errorf("with an operation the clients lack, missingMethods = %q, want %q", m, want)
	}
	files, err := generate(ops)
	if err != nil {
		t.Fatal(err)
	}
	if m := missingMethods(ops, files); len(m) > 0 {
		t.Errorf("the generator writes no method for %s", strings.Join(m, ", "))
	}
	if !bytes.Contains(files[tsDTS], []byte("dummyOp(request: DummyOpRequest, options?: CallOptions): Promise<Stats>;")) ||
		!bytes.Contains(files[tsDTS], []byte("export type DummyOpRequest = HistoryRequest;")) {
		t.Errorf("client.d.ts types dummyOp wrongly:\n%s", files[tsDTS])
	}
	if !bytes.Contains(files[tsDTS], []byte("dummyList(request?: DummyListRequest, options?: CallOptions): Promise<Edge[]>;")) ||
		!bytes.Contains(files[pyGen], []byte("return cast(List[Edge], self.call(\"dummy-list\", body))")) {
		t.Errorf("the clients type dummy-list's answer wrongly")
	}
}

// TestNames checks the names the generator gives.
func TestNames(t *testing.T) {
	for in, want := range map[string][3]string{
		"remember-batch":     {"RememberBatch", "rememberBatch", "remember_batch"},
		"get":                {"Get", "get", "get"},
		"quarantine-release": {"QuarantineRelease", "quarantineRelease", "quarantine_release"},
	} {
		if got := [3]string{pascal(in), camel(in), snake(in)}; got != want {
			t.Errorf("names of %s: %q, want %q", in, got, want)
		}
	}
	if pyParam("from") != "from_" || pyParam("to") != "to" {
		t.Errorf("pyParam: from → %s, to → %s", pyParam("from"), pyParam("to"))
	}
}

func firstDiff(a, b []byte) string {
	al, bl := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range max(len(al), len(bl)) {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("line %d is %q, want %q", i+1, x, y)
		}
	}
	return "none"
}

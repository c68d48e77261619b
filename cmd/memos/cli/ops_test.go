package cli

import (
	"encoding/json"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/memos-go/memos/api"
	"github.com/memos-go/memos/core"
)

// cliOnlyFlags are the flags of operation commands that set no field of
// their operation, each with why it belongs to the command line alone. Keep
// it small: a flag that changes what the operation does is a field.
var cliOnlyFlags = map[string]string{
	"search --temporal":        "an older spelling of --valid-at that scripts use",
	"explain --temporal":       "the same",
	"pack --temporal":          "the same",
	"pack --format":            "how to print the pack (md or json): HTTP answers JSON, MCP both",
	"forget --wait":            "waits for this machine's store to erase the content's bytes",
	"export --format":          "the file format (jsonl, the only one)",
	"export --output":          "the file to write; HTTP and MCP answer the export itself",
	"import --keep-embeddings": "memu only: a MemU database is a local file, which HTTP and MCP do not read",
	"import --model":           "memu only, the same",
}

// jsonFields lists the JSON names of t's fields, embedded structs flattened.
func jsonFields(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			out = append(out, jsonFields(f.Type)...)
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" && f.IsExported() {
			out = append(out, name)
		}
	}
	return out
}

// TestCommandsCoverOps walks the operation table: every operation has a
// command, and every flag of that command is one of the operation's fields
// under the same name (- for _) or a listed command-line-only flag.
func TestCommandsCoverOps(t *testing.T) {
	a := &app{stdout: io.Discard, stderr: io.Discard}
	root := a.rootCmd()
	byOp := map[string]*cobra.Command{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if name := c.Annotations[opAnnotation]; name != "" {
			byOp[name] = c
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	used := map[string]bool{}
	for _, o := range api.Ops() {
		c, ok := byOp[o.Name]
		if !ok {
			t.Errorf("operation %s has no command: add one and name it in commandOps", o.Name)
			continue
		}
		path := strings.TrimPrefix(c.CommandPath(), "memos ")
		fields := jsonFields(o.In)
		c.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
			if f.Name == "help" {
				return
			}
			key := path + " --" + f.Name
			if _, ok := cliOnlyFlags[key]; ok {
				used[key] = true
				return
			}
			if !slices.Contains(fields, strings.ReplaceAll(f.Name, "-", "_")) {
				t.Errorf("memos %s: the operation %s has no field %q (its fields: %s); name the flag after the field, or list it in cliOnlyFlags with why",
					key, o.Name, strings.ReplaceAll(f.Name, "-", "_"), strings.Join(fields, ", "))
			}
		})
	}
	for k := range cliOnlyFlags {
		if !used[k] {
			t.Errorf("cliOnlyFlags lists %q, which is no flag of an operation's command: remove it", k)
		}
	}
	for path, name := range commandOps {
		if _, ok := api.Lookup(name); !ok {
			t.Errorf("commandOps maps %q to %q, which is no operation", path, name)
		}
	}
}

// TestAddBatch: add-batch stores a batch all or none, with the operation's
// validation and error text (the same as memos add and HTTP give).
func TestAddBatch(t *testing.T) {
	e := newEnv(t)
	r := e.runStdin(`[{"content":"Alice prefers tea","type":"preference"},{"content":"Bob likes coffee","significance":11}]`, "add-batch", "-")
	if r.code != 2 || !strings.Contains(r.stderr, "significance 11 is outside 1–10") {
		t.Fatalf("a batch with a bad memory: exit %d, %s", r.code, r.stderr)
	}
	if r2 := e.run("add", "x", "--significance", "11"); r2.stderr != r.stderr {
		t.Errorf("add and add-batch word the same mistake differently:\n%s%s", r2.stderr, r.stderr)
	}
	r = e.runStdin(`{"memories":[{"content":"Alice prefers tea","type":"preference"},{"content":"Bob likes coffee"}]}`, "--json", "-n", "project:x", "add-batch", "-")
	var out api.MemoriesOut
	if err := json.Unmarshal([]byte(r.stdout), &out); r.code != 0 || err != nil || len(out.Memories) != 2 {
		t.Fatalf("add-batch: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
	if out.Memories[0].Namespace != "project:x" || out.Memories[0].Type != "preference" {
		t.Errorf("add-batch stored %+v", out.Memories[0])
	}
	var page core.ListResult
	e.json(&page, "-n", "project:x", "list", "--statuses", "all")
	if len(page.Memories) != 2 {
		t.Errorf("after a refused and a stored batch, the store holds %d memories", len(page.Memories))
	}
}

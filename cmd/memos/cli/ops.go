package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/memos-go/memos/api"
	"github.com/memos-go/memos/cmd/memos/config"
	"github.com/memos-go/memos/core"
)

// The store commands are clients of the operation table (package api): a
// command fills the input of its operation from its arguments and flags —
// each flag named after the field it sets, with - for _ — and runs the
// operation through api.Service on the CLI's store, so that a field has the
// validation and the error text it has over HTTP and MCP. opOf names a
// command's operation; TestCommandsCoverOps checks every operation has a
// command and every flag a field.

// opAnnotation is the cobra annotation that names a command's operation.
const opAnnotation = "memos.op"

// commandOps maps each command (its path after "memos") to its operation.
var commandOps = map[string]string{
	"add": "remember", "add-batch": "remember-batch", "capture": "capture", "search": "search",
	"pack": "context-pack", "explain": "explain", "get": "get", "update": "update", "history": "history",
	"revert": "revert", "set-validity": "set-validity", "supersede": "supersede", "link": "link",
	"unlink": "unlink", "edges": "edges", "forget": "forget", "consolidate": "consolidate", "stats": "stats",
	"audit": "audit", "audit verify": "audit-verify", "audit export": "audit-export",
	"quarantine list": "review", "quarantine release": "quarantine-release", "quarantine reject": "quarantine-reject",
	"learn": "learn", "lesson list": "lessons", "lesson show": "lesson", "lesson outcome": "lesson-outcome", "forget-source": "forget-source",
	"list": "list", "trace": "trace", "export": "export", "import": "import",
}

// annotateOps marks every command of root with its operation.
func annotateOps(root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		path := strings.TrimPrefix(strings.TrimPrefix(c.CommandPath(), root.Name()), " ")
		if name, ok := commandOps[path]; ok {
			if c.Annotations == nil {
				c.Annotations = map[string]string{}
			}
			c.Annotations[opAnnotation] = name
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// runOp runs the operation named name on in (a pointer to its input type)
// on the store, and prints its answer: as JSON with --json (the bytes HTTP
// answers), else with human.
func (a *app) runOp(cmd *cobra.Command, name string, in any, human func(out any, eng *core.Engine) func(io.Writer)) error {
	return a.callOp(cmd, name, in, func(_ context.Context, eng *core.Engine, _ *config.Config, out any) error {
		return a.emit(out, human(out, eng))
	})
}

// callOp runs the operation named name on in on the store and hands its
// answer to done, for commands that print more than the answer or act on it.
func (a *app) callOp(cmd *cobra.Command, name string, in any, done func(ctx context.Context, eng *core.Engine, cfg *config.Config, out any) error) error {
	return a.withEngine(cmd, func(ctx context.Context, eng *core.Engine, cfg *config.Config) error {
		out, err := runOpOn(ctx, eng, name, in)
		if err != nil {
			return err
		}
		return done(ctx, eng, cfg, out)
	})
}

// runOpOn runs the operation named name on in on eng, as HTTP and MCP do.
func runOpOn(ctx context.Context, eng *core.Engine, name string, in any) (any, error) {
	o, ok := api.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("no operation %s", name)
	}
	return (&api.Service{Engine: eng}).Run(ctx, o, in, nil)
}

// opOnID runs the operation named name on the input in after parsing the
// memory id in arg into *id.
func (a *app) opOnID(cmd *cobra.Command, arg string, id *int64, name string, in any, human func(out any, eng *core.Engine) func(io.Writer)) error {
	var err error
	if *id, err = parseID(arg); err != nil {
		return err
	}
	return a.runOp(cmd, name, in, human)
}

// attrs returns the attribute flags as the operations' Attrs.
func (f *attrFlags) attrs() (api.Attrs, error) {
	at := api.Attrs{Type: core.Type(f.typ), Pool: core.Pool(f.pool), Significance: f.significance, Entities: f.entities,
		EmotionalContext: f.emotion, Source: f.source, Session: f.session, Trust: core.TrustLevel(f.trust),
		ValidFrom: f.validFrom, ValidTo: f.validTo, Status: core.Status(f.status)}
	if f.changed("significance") && f.significance == 0 {
		return at, api.SignificanceError(0) // 0 given is not "the default"
	}
	if f.changed("trust-score") {
		at.TrustScore = &f.trustScore
	}
	if len(f.meta) > 0 {
		at.Metadata = map[string]any{}
		if err := applyMeta(at.Metadata, f.meta, false); err != nil {
			return at, err
		}
	}
	return at, nil
}

func (a *app) addBatchCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "add-batch <file|->",
		Short: "Remember several memories at once, all or none (JSON, as the remember-batch operation takes)",
		Long: `add-batch stores every memory of a JSON file in one transaction, or none: the
file is the remember-batch operation's request, {"memories": [{"content": ...,
"type": ..., ...}, ...]}, or just the array of memories. Each memory takes the
fields of memos add (see the HTTP and MCP reference).`,
		Example: `  memos add-batch facts.json
  echo '[{"content":"Alice prefers tea","type":"preference"}]' | memos add-batch -`,
		Args: nargs(1, 1, "one file (or - for standard input)"),
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			var b []byte
			var err error
			if args[0] == "-" {
				b, err = io.ReadAll(a.stdin)
			} else {
				b, err = os.ReadFile(args[0])
			}
			if err != nil {
				return core.Invalidf("add-batch: %v", err)
			}
			if t := strings.TrimSpace(string(b)); strings.HasPrefix(t, "[") {
				b, _ = json.Marshal(map[string]json.RawMessage{"memories": json.RawMessage(t)})
			}
			o, _ := api.Lookup("remember-batch")
			in, err := o.Decode(b)
			if err != nil {
				return err
			}
			if in.(*api.RememberBatchIn).Namespace != "" {
				return core.Invalidf("add-batch: give the namespace with --namespace, not in the file")
			}
			return a.runOp(cmd, "remember-batch", in, func(out any, eng *core.Engine) func(io.Writer) {
				ms := out.(*api.MemoriesOut).Memories
				return func(w io.Writer) {
					fmt.Fprintf(w, "added %s in namespace %s:", plural(len(ms), "memory", "memories"), eng.Namespace())
					for _, m := range ms {
						fmt.Fprintf(w, " %d", m.ID)
					}
					fmt.Fprintln(w)
				}
			})
		}),
	}
}

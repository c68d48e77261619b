package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/memos-go/memos/core"
)

func (a *app) migrateCmd() *cobra.Command {
	var to string
	cmd := &cobra.Command{
		Use:   "migrate --to BACKEND",
		Short: "Copy the store to another backend, keeping ids, and verify the copy",
		Long: `Migrate copies the configured store into a new, empty store of another
backend: every memory with its id and all its versions (every namespace and
status), every edge, the audit log and the store's embedding model. Ids that
were forgotten stay unused. It then reads both stores back and compares them
memory by memory. The source is left as it was.

The target is the backend's configured path (backends.<name>.path, default
$MEMOS_HOME/<its default file>); it must not hold memories yet. Once the copy
is verified, set backend: <name> (or MEMOS_BACKEND) to use it. Stop other memos
processes that write to the store first.`,
		Example: `  memos migrate --to bolt
  MEMOS_BACKENDS__BOLT__PATH=/data/memos.bolt memos migrate --to bolt --json`,
		Args: nargs(0, 0, "no arguments"),
		RunE: a.runE(func(cmd *cobra.Command, _ []string) error {
			if to == "" {
				return core.Invalidf("--to names the target backend (%v)", core.BackendNames())
			}
			td, err := core.LookupBackend(to)
			if err != nil {
				return err
			}
			src, err := a.loadConfig(cmd, "")
			if err != nil {
				return err
			}
			if to == src.Backend {
				return core.Invalidf("the store already uses the %s backend", to)
			}
			// The target's settings come from the same configuration, read as
			// if --backend were the target.
			if err := cmd.Root().PersistentFlags().Set("backend", to); err != nil {
				return err
			}
			a.backend = to
			dst, err := a.loadConfig(cmd, "")
			if err != nil {
				return err
			}
			sd, err := core.LookupBackend(src.Backend)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			sb, err := sd.Open(ctx, src.BackendConfig)
			if err != nil {
				return fmt.Errorf("open %s store: %w", src.Backend, err)
			}
			defer sb.Close()
			tb, err := td.Open(ctx, dst.BackendConfig)
			if err != nil {
				return fmt.Errorf("open %s store: %w", to, err)
			}
			var bar *countBar
			if isTerminal(a.stderr) {
				bar = &countBar{w: a.stderr, desc: "copying"}
			}
			rep, err := core.Migrate(ctx, sb, tb, bar.progress)
			bar.finish()
			if err = errors.Join(err, tb.Close()); err != nil {
				return err
			}
			return a.emit(rep, func(w io.Writer) {
				fmt.Fprintf(w, "copied %s (%s), %s and %s from %s to %s; verified\n",
					plural(rep.Memories, "memory", "memories"), plural(rep.Versions, "version", "versions"),
					plural(rep.Edges, "edge", "edges"), plural(rep.AuditEntries, "audit entry", "audit entries"), src.Backend, to)
				fmt.Fprintf(w, "to use it: set backend: %s in %s, or MEMOS_BACKEND=%s\n", to, src.File, to)
			})
		}),
	}
	cmd.Flags().StringVar(&to, "to", "", "the target backend, e.g. bolt")
	return cmd
}

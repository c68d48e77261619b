package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/memos-go/memos/cmd/memos/config"
	"github.com/memos-go/memos/core"
)

func (a *app) migrateCmd() *cobra.Command {
	var (
		to    string
		force bool
	)
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
processes that write to the store first.

Until the copy is verified the target is marked unfinished, and every command
refuses to open it. If migrate is interrupted, run it again: it resumes where
the copy stopped (if the source has not changed meanwhile) and verifies the
whole. --force deletes an unfinished target and starts over; it never deletes
a finished store.`,
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
			if force {
				if tb, err = a.startOver(cmd, td, tb, dst, to); err != nil {
					return err
				}
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
				if rep.Resumed > 0 {
					fmt.Fprintf(w, "resumed an interrupted copy: %s were already there\n", plural(rep.Resumed, "memory", "memories"))
				}
				fmt.Fprintf(w, "copied %s (%s), %s and %s from %s to %s; verified\n",
					plural(rep.Memories, "memory", "memories"), plural(rep.Versions, "version", "versions"),
					plural(rep.Edges, "edge", "edges"), plural(rep.AuditEntries, "audit entry", "audit entries"), src.Backend, to)
				fmt.Fprintf(w, "to use it: set backend: %s in %s, or MEMOS_BACKEND=%s\n", to, src.File, to)
			})
		}),
	}
	cmd.Flags().StringVar(&to, "to", "", "the target backend, e.g. bolt")
	cmd.Flags().BoolVar(&force, "force", false, "delete an unfinished target left by an interrupted migrate and copy again")
	return cmd
}

// startOver deletes the unfinished target tb and opens a new, empty one. It
// refuses to delete a target that is not an unfinished copy.
func (a *app) startOver(cmd *cobra.Command, td core.BackendDriver, tb core.Backend, dst *config.Config, to string) (core.Backend, error) {
	ctx := cmd.Context()
	unfinished, err := core.UnfinishedMigration(ctx, tb)
	if err != nil {
		tb.Close()
		return nil, fmt.Errorf("read %s store: %w", to, err)
	}
	if !unfinished {
		return tb, nil // an empty target; a full one is refused by Migrate
	}
	rm, ok := tb.(core.Remover)
	if !ok {
		tb.Close()
		return nil, core.Invalidf("the %s backend cannot delete its store; remove the unfinished target yourself and run migrate again", to)
	}
	if err := rm.Remove(); err != nil {
		return nil, fmt.Errorf("remove the unfinished %s store: %w", to, err)
	}
	fmt.Fprintf(a.stderr, "memos: removed the unfinished %s store; copying again\n", to)
	tb, err = td.Open(ctx, dst.BackendConfig)
	if err != nil {
		return nil, fmt.Errorf("open %s store: %w", to, err)
	}
	return tb, nil
}

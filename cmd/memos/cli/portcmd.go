package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/memos-go/memos/api"
	"github.com/memos-go/memos/cmd/memos/config"
	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/core/transfer"
)

func (a *app) exportCmd() *cobra.Command {
	var (
		format string
		in     api.ExportIn
		out    string
	)
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Write every memory, with all versions and edges, as JSONL (a backup)",
		Long: `Export writes the store as JSONL: a header line, then one line per memory
with every version (content, type, pool, significance, entities, source,
session, trust, validity, status, metadata, access statistics), then one line
per edge. Vectors are not written; an import embeds with its store's model.
--namespaces limits the export to namespaces (edges that lead outside are dropped
and counted). The format is versioned and documented in the README;
"memos import jsonl" restores it into any store.`,
		Example: `  memos export > backup.jsonl
  memos export --namespaces project:infra -o infra.jsonl
  memos import jsonl backup.jsonl --home /tmp/restore`,
		Args: nargs(0, 0, "no arguments"),
		RunE: a.readE(func(cmd *cobra.Command, _ []string) error {
			if format != "jsonl" {
				return core.Invalidf("export: unknown format %q (want jsonl)", format)
			}
			o, _ := api.Lookup("export")
			return a.withEngine(cmd, func(ctx context.Context, eng *core.Engine, _ *config.Config) error {
				w, done, err := outputFile(out, a.stdout)
				if err != nil {
					return err
				}
				sum, err := (&api.Service{Engine: eng}).WriteStream(ctx, o, &in, nil, w)
				if err = done(err); err != nil {
					return err
				}
				rep := sum.(*transfer.ExportReport)
				if out == "" || out == "-" {
					return nil // stdout holds the export; the summary would corrupt it
				}
				return a.emit(rep, func(w io.Writer) {
					fmt.Fprintf(w, "exported %s (%s) and %s to %s", plural(rep.Memories, "memory", "memories"),
						plural(rep.Versions, "version", "versions"), plural(rep.Edges, "edge", "edges"), out)
					if rep.DroppedEdges > 0 {
						fmt.Fprintf(w, "; left out %s leading outside the export", plural(rep.DroppedEdges, "edge", "edges"))
					}
					fmt.Fprintln(w)
				})
			})
		}),
	}
	cmd.Flags().StringVar(&format, "format", "jsonl", "output format (jsonl)")
	cmd.Flags().StringSliceVar(&in.Namespaces, "namespaces", nil, "export only these namespaces (repeatable or comma-separated)")
	a.renamed(cmd, map[string]string{"only": "namespaces"})
	cmd.Flags().StringVarP(&out, "output", "o", "", "write to this file instead of standard output (replaced atomically)")
	return cmd
}

// outputFile returns where to write: stdout for "" or "-", else a temporary
// file beside path that done renames over path when the write succeeded,
// so that a failed export never leaves a half-written backup.
func outputFile(path string, stdout io.Writer) (io.Writer, func(error) error, error) {
	if path == "" || path == "-" {
		return stdout, func(err error) error { return err }, nil
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return nil, nil, fmt.Errorf("export: %w", err)
	}
	done := func(err error) error {
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(f.Name(), path)
		}
		if err != nil {
			os.Remove(f.Name())
			return err
		}
		return nil
	}
	return f, done, nil
}

func (a *app) importCmd() *cobra.Command {
	var (
		in    api.ImportIn
		keep  bool
		model string
	)
	cmd := &cobra.Command{
		Use:   "import <jsonl|memu> <file>",
		Short: "Bring memories in: a memos JSONL export, or a MemU memory.db",
		Long: `Import reads the whole file and checks it before it writes anything: a line
or row that cannot be read is an error naming it, and nothing is stored.
It then writes in transactions of 256 memories. Running an import again adds
only what is missing (a memory already in the store, same namespace, creation
time and first content, is skipped), so an interrupted import is resumed by
running it again.

  jsonl  a "memos export" file: every version, edge, validity and trust is
         restored under new ids; vectors are computed by this store's embedder.
  memu   a MemU memory.db (table memories): content, type, significance,
         entities, emotional context and both timestamps are kept; trust is
         "imported", the source is memu:<MemU id> (MemU's own source is kept in
         metadata as memu_source). Rows memos cannot store are skipped with a
         warning. MemU's embeddings are used only with --keep-embeddings
         --model NAME, where NAME must be this store's model.`,
		Example: `  memos import jsonl backup.jsonl --home /tmp/restore
  memos import memu ~/.argentos/memory.db --dry-run
  memos import memu memory.db --namespace user:alice`,
		Args: nargs(2, 2, "a format (jsonl or memu) and a file"),
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			kind, path := args[0], args[1]
			if kind != "jsonl" && kind != "memu" {
				return core.Invalidf("import: unknown format %q (want jsonl or memu)", kind)
			}
			if kind == "jsonl" && keep {
				return core.Invalidf("import jsonl: --keep-embeddings applies to memu (an export carries no vectors)")
			}
			if keep && model == "" {
				return core.Invalidf("import memu: --keep-embeddings needs --model NAME, the model MemU's embeddings were made with")
			}
			a.readOnly = in.DryRun
			return a.withEngine(cmd, func(ctx context.Context, eng *core.Engine, _ *config.Config) error {
				var (
					rep      *core.ImportReport
					warnings []string
				)
				if kind == "jsonl" {
					// A memos export goes through the import operation, as over HTTP.
					f, err := os.Open(path)
					if err != nil {
						return fmt.Errorf("import jsonl: %w", err)
					}
					defer f.Close()
					o, _ := api.Lookup("import")
					in.Origin = "jsonl:" + path
					out, err := (&api.Service{Engine: eng}).ReadStream(ctx, o, &in, nil, f)
					if err != nil {
						return err
					}
					rep = out.(*core.ImportReport)
				} else {
					// A MemU database is a file on this machine: no operation reads one.
					req, ws, err := a.readMemU(ctx, eng, path, keep, model)
					if err != nil {
						return err
					}
					warnings = ws
					for _, w := range warnings {
						fmt.Fprintf(a.stderr, "memos: warning: %s\n", w)
					}
					req.DryRun = in.DryRun
					if rep, err = eng.Import(ctx, *req); err != nil {
						return err
					}
				}
				return a.emit(rep, func(w io.Writer) {
					verb := "imported"
					if rep.DryRun {
						verb = "would import"
					}
					already := plural(rep.Skipped, "memory was", "memories were")
					if rep.SkippedEdges > 0 {
						already = plural(rep.Skipped, "memory", "memories") + " and " + plural(rep.SkippedEdges, "edge", "edges") + " were"
					}
					fmt.Fprintf(w, "%s %s (%s) and %s; %s already in the store",
						verb, plural(rep.Imported, "memory", "memories"), plural(rep.Versions, "version", "versions"),
						plural(rep.Edges, "edge", "edges"), already)
					if len(warnings) > 0 {
						fmt.Fprintf(w, "; %s on standard error", plural(len(warnings), "warning", "warnings"))
					}
					fmt.Fprintln(w)
				})
			})
		}),
	}
	cmd.Flags().BoolVar(&in.DryRun, "dry-run", false, "check the file and report what would be imported; store nothing")
	cmd.Flags().BoolVar(&keep, "keep-embeddings", false, "memu: keep MemU's embeddings (needs --model)")
	cmd.Flags().StringVar(&model, "model", "", "memu: the model MemU's embeddings were made with; must be this store's")
	return cmd
}

// readMemU reads and checks a MemU database.
func (a *app) readMemU(ctx context.Context, eng *core.Engine, path string, keep bool, model string) (*core.ImportRequest, []string, error) {
	info := eng.Model()
	if keep && model != info.ID {
		return nil, nil, fmt.Errorf("import memu: %w: MemU's embeddings are %s vectors, this store holds %s; import without --keep-embeddings to embed again",
			core.ErrDimensionMismatch, model, info.ID)
	}
	res, err := transfer.ReadMemU(ctx, path, transfer.MemUOptions{KeepEmbeddings: keep, Model: model, Dim: info.Dim})
	if err != nil {
		return nil, nil, err
	}
	return res.Request, res.Warnings, nil
}

package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/core/embedtest"
	"github.com/memos-go/memos/plugins"
)

func (a *app) pluginCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plugin",
		Short: "Work with embedder plugins",
		Args:  nargs(0, 0, "a subcommand (test)"),
		RunE: a.runE(func(cmd *cobra.Command, _ []string) error {
			return cmd.Help()
		}),
	}
	cmd.AddCommand(a.pluginTestCmd())
	return cmd
}

// pluginCase is one conformance case's outcome as plugin test prints it.
type pluginCase struct {
	Name    string `json:"name"`
	Result  string `json:"result"` // pass, fail or skip
	Message string `json:"message,omitempty"`
}

// pluginReport is the --json output of plugin test.
type pluginReport struct {
	Plugin  string         `json:"plugin"`
	Model   core.ModelInfo `json:"model"`
	StartMS float64        `json:"start_ms"` // time to start the process and complete the handshake
	Cases   []pluginCase   `json:"cases"`
	Passed  int            `json:"passed"`
	Failed  int            `json:"failed"`
	Skipped int            `json:"skipped"`
}

func (a *app) pluginTestCmd() *cobra.Command {
	var cfg plugins.Config
	cmd := &cobra.Command{
		Use:   "test <binary>",
		Short: "Run the embedder conformance cases against a plugin binary",
		Long: `Plugin test starts the plugin the way memos does (go-plugin handshake, mutual
TLS, the checksum if given) and runs memos' embedder conformance cases
against it: its info is stable and valid, a batch returns one vector per text
of the declared dimension, vectors are finite (and unit length if the plugin
says so), the same text gives the same vector alone and in a batch, empty
batches and empty strings work, cancellation reaches the plugin, and a batch
larger than its max batch is split by the host. It prints one line per case
and exits non-zero if any case fails.`,
		Example: `  memos plugin test ./my-embedder
  memos plugin test ./my-embedder --checksum sha256:$(sha256sum my-embedder | cut -d' ' -f1)
  memos plugin test memos-embed-wordvec --arg -path --arg glove.6B.100d.txt.gz --json`,
		Args: nargs(1, 1, "the plugin binary"),
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			cfg.Path = args[0]
			ctx := cmd.Context()
			t0 := time.Now()
			p, err := plugins.Open(ctx, cfg)
			if err != nil {
				return err
			}
			defer p.Close()
			rep := &pluginReport{Plugin: args[0], StartMS: float64(time.Since(t0).Microseconds()) / 1000}
			if rep.Model, err = p.Info(ctx); err != nil {
				return err
			}
			results := embedtest.Check(ctx, p, append(embedtest.Cases(), embedtest.HostSplitsBatches)...)
			if err := ctx.Err(); err != nil {
				return err // interrupted: the results are not the plugin's
			}
			for _, r := range results {
				c := pluginCase{Name: r.Name, Result: "pass"}
				switch {
				case r.Skipped():
					c.Result, c.Message = "skip", r.Err.Error()
					rep.Skipped++
				case !r.Passed():
					c.Result, c.Message = "fail", r.Err.Error()
					rep.Failed++
				default:
					rep.Passed++
				}
				rep.Cases = append(rep.Cases, c)
			}
			if err := a.emit(rep, func(w io.Writer) { printPluginReport(w, rep) }); err != nil {
				return err
			}
			if rep.Failed > 0 {
				return core.Invalidf("plugin %s fails %d of %d conformance cases", args[0], rep.Failed, len(rep.Cases))
			}
			return nil
		}),
	}
	fs := cmd.Flags()
	fs.StringVar(&cfg.Checksum, "checksum", "", `refuse to start the binary unless its SHA-256 is this ("sha256:<hex>")`)
	fs.StringArrayVar(&cfg.Args, "arg", nil, "pass this argument to the plugin (repeat for several)")
	fs.DurationVar(&cfg.StartTimeout, "start-timeout", plugins.DefaultStartTimeout, "time to start the plugin and complete the handshake")
	return cmd
}

func printPluginReport(w io.Writer, r *pluginReport) {
	batch := "no max batch"
	if r.Model.MaxBatch > 0 {
		batch = fmt.Sprintf("max batch %d", r.Model.MaxBatch)
	}
	norm := "not normalised"
	if r.Model.Normalized {
		norm = "normalised"
	}
	fmt.Fprintf(w, "plugin %s: model %s, %d dimensions, %s, %s; started in %.0f ms\n\n",
		r.Plugin, r.Model.ID, r.Model.Dim, batch, norm, r.StartMS)
	tw := table(w)
	fmt.Fprintln(tw, "RESULT\tCASE\tDETAIL")
	for _, c := range r.Cases {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Result, c.Name, c.Message)
	}
	tw.Flush()
	// Not "N passed, N failed" alone on a line: test runners read that form.
	fmt.Fprintf(w, "\n%d of %d cases passed, %d failed, %d skipped\n", r.Passed, len(r.Cases), r.Failed, r.Skipped)
}

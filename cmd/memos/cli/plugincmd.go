package cli

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/core/embedtest"
	"github.com/memos-go/memos/core/provider/rerank/reranktest"
	"github.com/memos-go/memos/plugins"
)

func (a *app) pluginCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plugin",
		Short: "Work with embedder and reranker plugins",
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
	Kind    string `json:"kind"` // embedder or reranker
	Name    string `json:"name"`
	Result  string `json:"result"` // pass, fail or skip
	Message string `json:"message,omitempty"`
}

// pluginReport is the --json output of plugin test.
type pluginReport struct {
	Plugin  string          `json:"plugin"`
	Kinds   []string        `json:"kinds"`           // the services it serves: embedder, reranker
	Model   *core.ModelInfo `json:"model,omitempty"` // the embedder's
	StartMS float64         `json:"start_ms"`        // time to start the process and complete the handshake
	Cases   []pluginCase    `json:"cases"`
	Passed  int             `json:"passed"`
	Failed  int             `json:"failed"`
	Skipped int             `json:"skipped"`
}

// add records the results of one kind's cases.
func (r *pluginReport) add(kind string, results []conformResult) {
	for _, res := range results {
		c := pluginCase{Kind: kind, Name: res.Name, Result: "pass"}
		switch {
		case res.Skipped():
			c.Result, c.Message = "skip", res.Err.Error()
			r.Skipped++
		case !res.Passed():
			c.Result, c.Message = "fail", res.Err.Error()
			r.Failed++
		default:
			r.Passed++
		}
		r.Cases = append(r.Cases, c)
	}
}

// conformResult is the result type both conformance kits share.
type conformResult = embedtest.Result

func (a *app) pluginTestCmd() *cobra.Command {
	var cfg plugins.Config
	var kind string
	cmd := &cobra.Command{
		Use:   "test <binary>",
		Short: "Run the conformance cases against a plugin binary (embedder or reranker)",
		Long: `Plugin test starts the plugin the way memos does (go-plugin handshake, mutual
TLS, the checksum if given), asks which services it serves, and runs memos'
conformance cases for each against it.

An embedder: its info is stable and valid, a batch returns one vector per text
of the declared dimension, vectors are finite (and unit length if the plugin
says so), the same text gives the same vector alone and in a batch, empty
batches and empty strings work, cancellation reaches the plugin, and a batch
larger than its max batch is split by the host.

A reranker: one finite score per text in the texts' order (a text that answers
the query outscores unrelated ones wherever it stands), a text's rank does not
depend on its position, equal texts score alike, an empty list gets no scores,
long and non-ASCII texts are scored, concurrent calls agree, and cancellation
reaches the plugin.

It prints one line per case and exits non-zero if any case fails.`,
		Example: `  memos plugin test ./my-embedder
  memos plugin test ./my-reranker
  memos plugin test ./my-embedder --checksum sha256:$(sha256sum my-embedder | cut -d' ' -f1)
  memos plugin test memos-embed-wordvec --arg -path --arg glove.6B.100d.txt.gz --json`,
		Args: nargs(1, 1, "the plugin binary"),
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			cfg.Path = args[0]
			ctx := cmd.Context()
			var kinds []string
			switch kind {
			case "", "auto":
				var err error
				if kinds, err = plugins.Kinds(ctx, cfg); err != nil {
					if core.KindOf(err) != unclassified {
						return err // the plugin did not start: naming its kind would not help
					}
					// It started but did not list its services.
					return fmt.Errorf("%w (name the kind with --kind embedder or --kind reranker)", err)
				}
			case plugins.KindEmbedder, plugins.KindReranker:
				kinds = []string{kind}
			default:
				return core.Invalidf("--kind %q: want auto, embedder or reranker", kind)
			}
			if len(kinds) == 0 {
				return core.Invalidf("plugin %s serves neither an embedder nor a reranker", args[0])
			}
			rep := &pluginReport{Plugin: args[0], Kinds: kinds}
			for _, kind := range kinds {
				t0 := time.Now()
				var results []conformResult
				switch kind {
				case plugins.KindEmbedder:
					p, err := plugins.Open(ctx, cfg)
					if err != nil {
						return err
					}
					defer p.Close()
					rep.StartMS = float64(time.Since(t0).Microseconds()) / 1000
					mi, err := p.Info(ctx)
					if err != nil {
						return err
					}
					rep.Model = &mi
					results = embedtest.Check(ctx, p, append(embedtest.Cases(), embedtest.HostSplitsBatches)...)
				case plugins.KindReranker:
					r, err := plugins.OpenReranker(ctx, cfg)
					if err != nil {
						return err
					}
					defer r.Close()
					if rep.StartMS == 0 {
						rep.StartMS = float64(time.Since(t0).Microseconds()) / 1000
					}
					results = reranktest.Check(ctx, r)
				}
				if err := ctx.Err(); err != nil {
					return err // interrupted: the results are not the plugin's
				}
				rep.add(kind, results)
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
	fs.StringVar(&kind, "kind", "auto", "which cases to run: embedder, reranker, or auto (what the plugin serves, asked over gRPC reflection)")
	fs.StringVar(&cfg.Checksum, "checksum", "", `refuse to start the binary unless its SHA-256 is this ("sha256:<hex>")`)
	fs.StringArrayVar(&cfg.Args, "arg", nil, "pass this argument to the plugin (repeat for several)")
	fs.DurationVar(&cfg.StartTimeout, "start-timeout", plugins.DefaultStartTimeout, "time to start the plugin and complete the handshake")
	return cmd
}

func printPluginReport(w io.Writer, r *pluginReport) {
	if m := r.Model; m != nil {
		batch := "no max batch"
		if m.MaxBatch > 0 {
			batch = fmt.Sprintf("max batch %d", m.MaxBatch)
		}
		norm := "not normalised"
		if m.Normalized {
			norm = "normalised"
		}
		fmt.Fprintf(w, "plugin %s: model %s, %d dimensions, %s, %s; started in %.0f ms\n",
			r.Plugin, m.ID, m.Dim, batch, norm, r.StartMS)
	}
	if slices.Contains(r.Kinds, plugins.KindReranker) {
		if r.Model == nil {
			fmt.Fprintf(w, "plugin %s: reranker; started in %.0f ms\n", r.Plugin, r.StartMS)
		} else {
			fmt.Fprintf(w, "plugin %s: also a reranker\n", r.Plugin)
		}
	}
	for _, kind := range r.Kinds {
		fmt.Fprintln(w)
		if len(r.Kinds) > 1 {
			fmt.Fprintf(w, "%s cases:\n", kind)
		}
		tw := table(w)
		fmt.Fprintln(tw, "RESULT\tCASE\tDETAIL")
		for _, c := range r.Cases {
			if c.Kind == kind {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Result, c.Name, c.Message)
			}
		}
		tw.Flush()
	}
	// Not "N passed, N failed" alone on a line: test runners read that form.
	fmt.Fprintf(w, "\n%d of %d cases passed, %d failed, %d skipped\n", r.Passed, len(r.Cases), r.Failed, r.Skipped)
}

package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/memos-go/memos/cmd/memos/config"
	"github.com/memos-go/memos/core"
)

func (a *app) reembedCmd() *cobra.Command {
	var batch int
	cmd := &cobra.Command{
		Use:   "reembed",
		Short: "Re-embed every memory with the configured embedder and switch the store to it",
		Long: `Reembed moves a store to a new embedding model. Configure the new embedder
(embedder.name and its section in config.yaml, or --embedder), then run
memos reembed: every memory — in every namespace, with every status — whose
vector was made by another model is embedded again and written as a new
version that differs only in its embedding (memos history shows it). Once
all are done, the store records the new model in one step.

Until that step the store still works with the old embedder (its vector
search leaves out the memories already converted). Other commands refuse a
store whose recorded model differs from the configured one; only reembed
opens it. Work is committed batch by batch (--batch memories at a time), so
an interrupted run (Ctrl-C, a crash, an unreachable embedding server) loses
nothing: run memos reembed again and it carries on where it stopped.

Stop other memos processes that write to the store first.`,
		Example: `  # switch from the built-in hash embedder to a local Ollama model
  MEMOS_EMBEDDER=ollama memos reembed
  memos reembed --batch 64 --json`,
		Args: nargs(0, 0, "no arguments"),
		RunE: a.runE(func(cmd *cobra.Command, _ []string) error {
			if batch < 0 {
				return core.Invalidf("--batch %d must be positive (0: the default, %d)", batch, core.DefaultReembedBatch)
			}
			a.allowModelChange = true // this command only: it is how a store changes models
			return a.withEngine(cmd, func(ctx context.Context, eng *core.Engine, _ *config.Config) error {
				var bar *countBar
				if isTerminal(a.stderr) {
					bar = &countBar{w: a.stderr, desc: "re-embedding"}
				}
				rep, err := eng.Reembed(ctx, core.ReembedOptions{BatchSize: batch, Progress: bar.progress})
				bar.finish()
				if err != nil {
					if rep != nil && rep.Reembedded > 0 {
						return fmt.Errorf("%w (the %d memories re-embedded so far are kept; run memos reembed again to finish)", err, rep.Reembedded)
					}
					return err
				}
				return a.emit(rep, func(w io.Writer) { printReembed(w, rep) })
			})
		}),
	}
	cmd.Flags().IntVar(&batch, "batch", 0, fmt.Sprintf("memories embedded and written per transaction (default %d)", core.DefaultReembedBatch))
	return cmd
}

func printReembed(w io.Writer, r *core.ReembedReport) {
	if r.Reembedded == 0 && !r.Switched {
		fmt.Fprintf(w, "all %s are embedded with %s (%d dimensions); nothing to do\n", plural(r.Total, "memory", "memories"), r.Model, r.Dim)
		return
	}
	fmt.Fprintf(w, "re-embedded %s with %s (%d dimensions)", plural(r.Reembedded, "memory", "memories"), r.Model, r.Dim)
	if r.Skipped > 0 {
		fmt.Fprintf(w, "; %d already were", r.Skipped)
	}
	fmt.Fprintln(w)
	if r.Switched {
		if r.Previous != "" && r.Previous != r.Model {
			fmt.Fprintf(w, "the store now uses %s (was %s)\n", r.Model, r.Previous)
		} else {
			fmt.Fprintf(w, "the store now uses %s\n", r.Model)
		}
	}
}

// countBar draws the progress of a re-embedding on a terminal. A nil
// *countBar draws nothing.
// countBar is a progress bar over a count of memories, for long commands
// (reembed, migrate); a nil *countBar shows nothing.
type countBar struct {
	w    io.Writer
	desc string
	bar  *progressbar.ProgressBar
}

func (b *countBar) progress(done, total int) {
	if b == nil {
		return
	}
	if b.bar == nil {
		b.bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(b.w),
			progressbar.OptionSetDescription(b.desc),
			progressbar.OptionSetWidth(30),
			progressbar.OptionShowCount(),
			progressbar.OptionShowIts(),
			progressbar.OptionSetItsString("memories"),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionSetPredictTime(true),
		)
	}
	b.bar.ChangeMax(total)
	_ = b.bar.Set(done)
}

// finish ends the bar, complete or not, and leaves the cursor on a new line.
func (b *countBar) finish() {
	if b == nil || b.bar == nil {
		return
	}
	if !b.bar.IsFinished() {
		_ = b.bar.Exit()
	}
	fmt.Fprintln(b.w)
}

package cli

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/memos-go/memos/api"
	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/core/transfer"
)

func (a *app) captureCmd() *cobra.Command {
	var (
		session   string
		noExtract bool
	)
	cmd := &cobra.Command{
		Use:   "capture [file|-]",
		Short: "Remember a conversation: its turns, and the facts, preferences, events and relationships in it",
		Long: `Capture stores each turn of a conversation as a raw memory (type turn, with
its speaker, the session and its time), then asks the configured extractor
(extractor.name: "rules", the offline default, or "llm") for the facts,
preferences, events and relationships stated in the new turns, and stores them
in the memory pool with a derived_from edge to their turns.

The conversation comes from the file or standard input, as JSONL
({"speaker","text","time"} per line) or plain text ("Speaker: text" per line).
Capturing the same turns again stores nothing new, so a growing conversation
can be captured as it goes.`,
		Example: `  memos capture --session chat-42 < conversation.jsonl
  memos capture --session standup-2026-11-30 notes.txt
  memos search "what does the user prefer" --pool memory`,
		Args: nargs(0, 1, "at most one file"),
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			in := a.stdin
			if len(args) == 1 && args[0] != "-" {
				f, err := os.Open(args[0])
				if err != nil {
					return fmt.Errorf("capture: %w", err)
				}
				defer f.Close()
				in = f
			}
			turns, err := transfer.ReadTurns(in)
			if err != nil {
				return fmt.Errorf("capture: %w", err)
			}
			req := &api.CaptureIn{Session: session, NoExtract: noExtract, Turns: make([]api.TurnIn, len(turns))}
			for i, t := range turns {
				req.Turns[i] = api.TurnIn{Speaker: t.Speaker, Text: t.Text}
				if !t.Time.IsZero() {
					req.Turns[i].Time = t.Time.Format(time.RFC3339Nano)
				}
			}
			return a.runOp(cmd, "capture", req, func(out any, _ *core.Engine) func(io.Writer) {
				res := out.(*core.CaptureResult)
				return func(w io.Writer) {
					fmt.Fprintf(w, "captured %s of session %s (%d new) and extracted %s",
						plural(len(res.Turns), "turn", "turns"), res.Session, res.NewTurns, plural(len(res.Memories), "memory", "memories"))
					if res.Skipped > 0 {
						fmt.Fprintf(w, " (%d already stored)", res.Skipped)
					}
					fmt.Fprintln(w, ":")
					for _, m := range res.Memories {
						fmt.Fprintf(w, "  %d  %-12s sig %-2d %s\n", m.ID, m.Type, m.Significance, snippet(m.Content, 90))
					}
				}
			})
		}),
	}
	cmd.Flags().StringVar(&session, "session", "", "the conversation's name (required)")
	cmd.Flags().BoolVar(&noExtract, "no-extract", false, "store the turns only")
	return cmd
}

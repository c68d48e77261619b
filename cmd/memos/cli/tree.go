package cli

import "github.com/spf13/cobra"

// Tree returns the memos command tree as Main builds it, with cobra's help
// and completion commands added as they are when Main runs, for programs
// that document it (cmd/memos/internal/docgen writes docs/reference/cli.md
// from it). Run commands with Main, not through the tree.
func Tree() *cobra.Command {
	root := (&app{}).rootCmd()
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	return root
}

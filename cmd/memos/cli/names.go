package cli

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// renamed lets cmd's flags be given by the names they had before they took
// the names of the operations' fields (old → new): for one release an old
// name still works, with a warning on standard error. Help and the
// references show only the new names.
func (a *app) renamed(cmd *cobra.Command, old map[string]string) {
	warned := map[string]bool{}
	cmd.Flags().SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		n, ok := old[name]
		if !ok {
			return pflag.NormalizedName(name)
		}
		if !warned[name] {
			warned[name] = true
			fmt.Fprintf(a.stderr, "memos: --%s is now --%s; the old name goes away in the next release\n", name, n)
		}
		return pflag.NormalizedName(n)
	})
}

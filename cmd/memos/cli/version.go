package cli

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/memos-go/memos/core"
)

// The release build (cmd/memos/release) stamps these with
// -ldflags "-X github.com/memos-go/memos/cmd/memos/cli.buildVersion=…":
// buildVersion is `git describe` of the commit, buildCommit its hash and
// buildDate its time (not the time of the build, so that two builds are
// byte-identical). Other builds leave them empty and Build reads what the Go
// command recorded (runtime/debug.ReadBuildInfo).
var (
	buildVersion string
	buildCommit  string
	buildDate    string
)

// BuildInfo says which memos this is: `memos version`, /healthz and the
// MCP server's serverInfo report it.
type BuildInfo struct {
	// Version is the module version: the release's tag, else what the Go
	// command stamped (a tag, or a pseudo-version of the commit with
	// "+dirty" for a modified tree), else "dev" (go run, go test).
	Version string `json:"version"`
	// Commit is the VCS revision the binary was built from, Modified
	// whether the tree had changes, Date the commit's time (RFC 3339).
	Commit   string `json:"commit,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	Date     string `json:"date,omitempty"`
	// Go is the toolchain that built it, Platform its GOOS/GOARCH.
	Go       string `json:"go"`
	Platform string `json:"platform"`
	// What was compiled in (registered by the program's imports).
	Backends    []string `json:"backends"`
	Embedders   []string `json:"embedders"`
	Extractors  []string `json:"extractors"`
	Summarizers []string `json:"summarizers"`
	Rerankers   []string `json:"rerankers"`
}

// Build returns the running binary's build information.
func Build() BuildInfo {
	b := BuildInfo{
		Version: "dev", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH,
		Backends: core.BackendNames(), Embedders: core.EmbedderNames(), Extractors: core.ExtractorNames(),
		Summarizers: core.SummarizerNames(), Rerankers: core.RerankerNames(),
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			b.Version = v
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				b.Commit = s.Value
			case "vcs.time":
				b.Date = s.Value
			case "vcs.modified":
				b.Modified = s.Value == "true"
			}
		}
	}
	if buildVersion != "" {
		b.Version = buildVersion
	}
	if buildCommit != "" {
		b.Commit = buildCommit
	}
	if buildDate != "" {
		b.Date = buildDate
	}
	return b
}

// version is memos' module version, as Build reports it.
func version() string { return Build().Version }

// writeText prints b for people, one fact a line.
func (b BuildInfo) writeText(w io.Writer) {
	commit := b.Commit
	if commit == "" {
		commit = "unknown"
	} else if b.Modified {
		commit += " (modified)"
	}
	date := b.Date
	if date == "" {
		date = "unknown"
	}
	list := func(names []string) string {
		if len(names) == 0 {
			return "none"
		}
		return strings.Join(names, ", ")
	}
	fmt.Fprintf(w, "memos %s\n", b.Version)
	fmt.Fprintf(w, "  commit       %s\n", commit)
	fmt.Fprintf(w, "  date         %s\n", date)
	fmt.Fprintf(w, "  go           %s %s\n", b.Go, b.Platform)
	fmt.Fprintf(w, "  backends     %s\n", list(b.Backends))
	fmt.Fprintf(w, "  embedders    %s\n", list(b.Embedders))
	fmt.Fprintf(w, "  extractors   %s\n", list(b.Extractors))
	fmt.Fprintf(w, "  summarizers  %s\n", list(b.Summarizers))
	fmt.Fprintf(w, "  rerankers    %s\n", list(b.Rerankers))
}

func (a *app) versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Show the version, commit, Go version and compiled-in backends and embedders",
		Long: `version prints which memos this is: the module version, the commit it was
built from and that commit's time, the Go version and platform, and the
backends, embedders, extractors, summarizers and rerankers compiled in.
memos --version prints the same; with --json it is one JSON object.`,
		Args: nargs(0, 0, "no arguments"),
		RunE: a.runE(func(*cobra.Command, []string) error {
			b := Build()
			return a.emit(b, b.writeText)
		}),
	}
}

// versionFlag makes `memos --version` print what `memos version` prints
// (the JSON object with --json); `memos` alone still prints the help.
func (a *app) versionFlag(root *cobra.Command) {
	var show bool
	root.Flags().BoolVar(&show, "version", false, "print the version, as memos version does")
	root.RunE = func(cmd *cobra.Command, _ []string) error {
		if !show {
			return cmd.Help()
		}
		a.ran = true
		b := Build()
		return a.emit(b, b.writeText)
	}
}

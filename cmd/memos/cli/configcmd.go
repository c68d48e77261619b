package cli

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/memos-go/memos/cmd/memos/config"
)

func (a *app) initCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "init",
		Short: "Create the home directory and a commented config.yaml (never overwrites)",
		Args:  nargs(0, 0, "no arguments"),
		RunE: a.runE(func(cmd *cobra.Command, _ []string) error {
			cfg, err := a.loadConfig(cmd, "")
			if err != nil {
				return err
			}
			created, err := writeTemplate(cfg.Home, cfg.File)
			if err != nil {
				return err
			}
			out := struct {
				Home    string `json:"home"`
				Config  string `json:"config"`
				Created bool   `json:"created"`
			}{cfg.Home, cfg.File, created}
			return a.emit(out, func(w io.Writer) {
				if !created {
					fmt.Fprintf(w, "%s already exists; left it unchanged\n", cfg.File)
					return
				}
				fmt.Fprintf(w, "created %s (every setting commented out, with its default)\n", cfg.File)
				fmt.Fprintln(w, `next: memos add "I prefer short answers" --type preference; memos config show`)
			})
		}),
	}
}

// writeTemplate creates home and, if it does not exist, the config file. It
// reports whether it wrote the file; an existing file is never touched.
func writeTemplate(home, file string) (bool, error) {
	if err := os.MkdirAll(home, 0o700); err != nil {
		return false, fmt.Errorf("create home directory: %w", err)
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("create %s: %w", file, err)
	}
	_, err = io.WriteString(f, config.Template())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(file) // never leave half a config behind
		return false, fmt.Errorf("write %s: %w", file, err)
	}
	return true, nil
}

func (a *app) configCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Inspect the configuration",
		Args:  nargs(0, 0, "a subcommand (show)"),
		RunE: a.runE(func(cmd *cobra.Command, _ []string) error {
			return cmd.Help()
		}),
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "show",
		Short: "Print the effective configuration and where each value came from",
		Long: `Show prints every effective setting, its value and its source: default, file
($MEMOS_HOME/config.yaml), env (MEMOS_* variables) or flag. A default is shown
with its value; only the settings of a module (a backend's, an embedder's, ...)
that nothing set and that does not tell its defaults show "(the module's
default)": the module applies it.`,
		Args: nargs(0, 0, "no arguments"),
		RunE: a.runE(func(cmd *cobra.Command, _ []string) error {
			cfg, err := a.loadConfig(cmd, "")
			if err != nil {
				return err
			}
			out := struct {
				File       string         `json:"file"`
				FileLoaded bool           `json:"file_loaded"`
				Values     []config.Value `json:"values"`
			}{cfg.File, cfg.FileLoaded, cfg.Values}
			return a.emit(out, func(w io.Writer) { printConfig(w, cfg) })
		}),
	})
	return cmd
}

func printConfig(w io.Writer, cfg *config.Config) {
	state := "loaded"
	if !cfg.FileLoaded {
		state = "not found; memos init creates one"
	}
	fmt.Fprintf(w, "config file %s (%s)\n\n", cfg.File, state)
	tw := table(w)
	fmt.Fprintln(tw, "KEY\tVALUE\tSOURCE")
	for _, v := range cfg.Values {
		val := "(the module's default)"
		if v.Value != nil {
			val = fmt.Sprint(v.Value)
		}
		src := string(v.Source)
		if v.Origin != "" && v.Source != config.SourceFile {
			src += " " + v.Origin
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", v.Key, val, src)
	}
	tw.Flush()
}

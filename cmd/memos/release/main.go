// Command release builds memos' release archives: static, CGO-free binaries
// of cmd/memos for Linux, macOS and Windows on amd64 and arm64, built with
// -trimpath and stripped, each packed with README.md, LICENSE and
// CHANGELOG.md (tar.gz, zip for Windows), and a SHA256SUMS file over the
// archives. Run it from the repository:
//
//	go run ./cmd/memos/release                  # every target into dist/
//	go run ./cmd/memos/release -targets linux/amd64 -out /tmp/dist
//
// The builds are reproducible: the version (git describe), commit and date
// (the commit's time, not the build's) are stamped with -ldflags -X, the
// archives carry that date and no owner, so the same commit built twice, on
// any machine with the same Go, gives the same bytes. It prints each
// binary's and archive's size.
package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Targets are the platforms a release builds.
var Targets = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "windows/amd64", "windows/arm64"}

// Docs are the files every archive carries beside the binary, relative to
// the repository root.
var Docs = []string{"README.md", "LICENSE", "CHANGELOG.md"}

// stampPkg is where the version variables live (see cli.Build).
const stampPkg = "github.com/memos-go/memos/cmd/memos/cli"

// Stamp is what a build records about its source.
type Stamp struct {
	Version string    // git describe --tags --always --dirty
	Commit  string    // the commit's hash
	Date    time.Time // the commit's time
}

// Built is one target's result.
type Built struct {
	Target      string
	Binary      string // path of the binary
	BinarySize  int64
	Archive     string // path of the archive
	ArchiveSize int64
}

func main() {
	out := flag.String("out", "dist", "directory for the archives and SHA256SUMS (created; files of the same name are replaced)")
	targets := flag.String("targets", strings.Join(Targets, ","), "comma-separated GOOS/GOARCH pairs")
	version := flag.String("version", "", "version to stamp (default: git describe --tags --always --dirty)")
	flag.Parse()
	if err := run(context.Background(), *out, strings.Split(*targets, ","), *version, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out string, targets []string, version string, w io.Writer) error {
	root, err := repoRoot(ctx)
	if err != nil {
		return err
	}
	st, err := GitStamp(ctx, root)
	if err != nil {
		return err
	}
	if version != "" {
		st.Version = version
	}
	builds, err := Release(ctx, root, out, targets, st, nil)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "target\tbinary bytes\tarchive bytes\tarchive\t\n")
	for _, b := range builds {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t\n", b.Target, b.BinarySize, b.ArchiveSize, filepath.Base(b.Archive))
	}
	tw.Flush()
	fmt.Fprintf(w, "memos %s (%s, %s): %d archives and SHA256SUMS in %s\n", st.Version, st.Commit, st.Date.Format(time.RFC3339), len(builds), out)
	return nil
}

// repoRoot is the module root of the working directory.
func repoRoot(ctx context.Context) (string, error) {
	b, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(b))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("run release inside the memos repository")
	}
	return filepath.Dir(mod), nil
}

// GitStamp reads the version, commit and commit time of the checkout.
func GitStamp(ctx context.Context, root string) (Stamp, error) {
	git := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = root
		b, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(b)), nil
	}
	var st Stamp
	var err error
	if st.Version, err = git("describe", "--tags", "--always", "--dirty"); err != nil {
		return st, err
	}
	if st.Commit, err = git("rev-parse", "HEAD"); err != nil {
		return st, err
	}
	ts, err := git("log", "-1", "--format=%ct")
	if err != nil {
		return st, err
	}
	var sec int64
	if _, err := fmt.Sscan(ts, &sec); err != nil {
		return st, fmt.Errorf("commit time %q: %w", ts, err)
	}
	st.Date = time.Unix(sec, 0).UTC()
	return st, nil
}

// Release builds every target into out, packs the archives and writes
// SHA256SUMS. env, if not nil, is added to each build's environment (the
// tests use it for GOCACHE).
func Release(ctx context.Context, root, out string, targets []string, st Stamp, env []string) ([]Built, error) {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	docs := map[string][]byte{}
	for _, d := range Docs {
		b, err := os.ReadFile(filepath.Join(root, d))
		if err != nil {
			return nil, fmt.Errorf("every archive carries %s: %w", d, err)
		}
		docs[d] = b
	}
	var builds []Built
	sums := map[string][]byte{}
	for _, t := range targets {
		goos, goarch, ok := strings.Cut(strings.TrimSpace(t), "/")
		if !ok || goos == "" || goarch == "" {
			return nil, fmt.Errorf("target %q: want GOOS/GOARCH, e.g. linux/amd64", t)
		}
		base := fmt.Sprintf("memos_%s_%s_%s", st.Version, goos, goarch)
		bin := filepath.Join(out, base, "memos")
		if goos == "windows" {
			bin += ".exe"
		}
		if err := Build(ctx, root, bin, goos, goarch, st, env); err != nil {
			return nil, err
		}
		exe, err := os.ReadFile(bin)
		if err != nil {
			return nil, err
		}
		files := []File{{Name: base + "/" + filepath.Base(bin), Data: exe, Mode: 0o755}}
		for _, d := range Docs {
			files = append(files, File{Name: base + "/" + d, Data: docs[d], Mode: 0o644})
		}
		var buf bytes.Buffer
		name := base + ".tar.gz"
		if goos == "windows" {
			name = base + ".zip"
			err = Zip(&buf, files, st.Date)
		} else {
			err = TarGz(&buf, files, st.Date)
		}
		if err != nil {
			return nil, fmt.Errorf("pack %s: %w", name, err)
		}
		archive := filepath.Join(out, name)
		if err := os.WriteFile(archive, buf.Bytes(), 0o644); err != nil {
			return nil, err
		}
		sums[name] = buf.Bytes()
		builds = append(builds, Built{Target: goos + "/" + goarch, Binary: bin, BinarySize: int64(len(exe)), Archive: archive, ArchiveSize: int64(buf.Len())})
	}
	if err := os.WriteFile(filepath.Join(out, "SHA256SUMS"), Checksums(sums), 0o644); err != nil {
		return nil, err
	}
	return builds, nil
}

// Tags are the build tags of a release binary. noplot leaves out `memos
// bench --plot` (gonum/plot and its fonts: 7.1 of 57.5 MB for linux/amd64);
// a memos built from source has it.
const Tags = "noplot"

// Build compiles cmd/memos for goos/goarch into bin: no cgo (a static
// binary), -trimpath (no paths of this machine), -s -w (no symbol table or
// DWARF), no VCS stamp of Go's own (the version variables say it, and a
// stamp of the tree's state would differ between checkouts).
func Build(ctx context.Context, root, bin, goos, goarch string, st Stamp, env []string) error {
	ldflags := strings.Join([]string{"-s", "-w",
		"-X", stampPkg + ".buildVersion=" + st.Version,
		"-X", stampPkg + ".buildCommit=" + st.Commit,
		"-X", stampPkg + ".buildDate=" + st.Date.UTC().Format(time.RFC3339),
	}, " ")
	cmd := exec.CommandContext(ctx, "go", "build", "-tags", Tags, "-trimpath", "-buildvcs=false", "-ldflags", ldflags, "-o", bin, "./cmd/memos")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch, "GOFLAGS=-mod=readonly")
	cmd.Env = append(cmd.Env, env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build %s/%s: %w\n%s", goos, goarch, err, out)
	}
	return nil
}

// File is one member of an archive.
type File struct {
	Name string // slash-separated path inside the archive
	Data []byte
	Mode int64
}

// TarGz writes files as a gzip-compressed tar. Members are in name order,
// dated mod, owned by nobody in particular (uid and gid 0, no names), and
// the gzip header has no name or time: the same files give the same bytes.
func TarGz(w io.Writer, files []File, mod time.Time) error {
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	for _, f := range sorted(files) {
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: f.Name, Size: int64(len(f.Data)), Mode: f.Mode,
			ModTime: mod.UTC().Truncate(time.Second), Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := tw.Write(f.Data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

// Zip writes files as a zip archive, in name order, dated mod.
func Zip(w io.Writer, files []File, mod time.Time) error {
	zw := zip.NewWriter(w)
	for _, f := range sorted(files) {
		hdr := &zip.FileHeader{Name: f.Name, Method: zip.Deflate, Modified: mod.UTC().Truncate(time.Second)}
		hdr.SetMode(os.FileMode(f.Mode))
		fw, err := zw.CreateHeader(hdr)
		if err != nil {
			return err
		}
		if _, err := fw.Write(f.Data); err != nil {
			return err
		}
	}
	return zw.Close()
}

func sorted(files []File) []File {
	s := slices.Clone(files)
	slices.SortFunc(s, func(a, b File) int { return strings.Compare(a.Name, b.Name) })
	return s
}

// Checksums is a SHA256SUMS file over the named contents, in name order,
// in the form sha256sum -c reads ("<hex>  <name>").
func Checksums(files map[string][]byte) []byte {
	var b bytes.Buffer
	for _, name := range slices.Sorted(maps.Keys(files)) {
		sum := sha256.Sum256(files[name])
		fmt.Fprintf(&b, "%s  %s\n", hex.EncodeToString(sum[:]), name)
	}
	return b.Bytes()
}

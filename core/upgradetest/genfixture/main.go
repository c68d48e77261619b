// Command genfixture writes the upgrade fixtures of package upgradetest: a
// sqlite store and a bolt store built by upgradetest.Build (the sqlite one
// also holds rows imported with plain SQL, as from a MemU memory.db), and
// what this build of memos answers about them (upgradetest.Answers and
// upgradetest.Revert). Run it in a checkout of the release whose format the
// fixtures should pin, with this directory copied in:
//
//	git archive <release> | tar -x -C /tmp/old
//	cp -r core/upgradetest /tmp/old/core/
//	(cd /tmp/old && go run ./core/upgradetest/genfixture -out "$PWD/core/upgradetest/testdata" -tag v1)
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"flag"
	"fmt"
	"io/fs"
	"log"
	"os"
	"path/filepath"

	"github.com/memos-go/memos/backends/bolt"
	"github.com/memos-go/memos/backends/sqlite"
	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/upgradetest"
)

func main() {
	out := flag.String("out", "testdata", "directory for the fixtures")
	tag := flag.String("tag", "v1", "name of the format the fixtures pin")
	flag.Parse()
	if err := run(context.Background(), *out, *tag); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, out, tag string) error {
	tmp, err := os.MkdirTemp("", "genfixture")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	// sqlite
	db := filepath.Join(tmp, "memory.db")
	if err := build(ctx, func() (driver.Backend, error) { return sqlite.Open(ctx, sqlite.Config{Path: db}) }); err != nil {
		return err
	}
	if err := importRows(ctx, db); err != nil {
		return err
	}
	if _, err := os.Stat(db + "-wal"); err == nil {
		return fmt.Errorf("%s-wal is left after close: the fixture would be incomplete", db)
	}
	if err := gzipFile(db, filepath.Join(out, "sqlite-"+tag+".db.gz")); err != nil {
		return err
	}
	if err := answer(ctx, out, "sqlite-"+tag, func() (driver.Backend, error) { return sqlite.Open(ctx, sqlite.Config{Path: db}) }); err != nil {
		return err
	}

	// bolt
	dir := filepath.Join(tmp, "memory.bolt")
	if err := build(ctx, func() (driver.Backend, error) { return bolt.Open(ctx, bolt.Config{Path: dir}) }); err != nil {
		return err
	}
	if err := gzipFile(filepath.Join(dir, bolt.StoreFile), filepath.Join(out, "bolt-"+tag+".bolt.gz")); err != nil {
		return err
	}
	// The keyword index as that release built it, so that a test can open
	// the store with it (and see it rebuilt when the index's layout changed).
	if err := tarDir(dir, bolt.IndexDir, filepath.Join(out, "bolt-"+tag+"-index.tar.gz")); err != nil {
		return err
	}
	return answer(ctx, out, "bolt-"+tag, func() (driver.Backend, error) { return bolt.Open(ctx, bolt.Config{Path: dir}) })
}

func build(ctx context.Context, open func() (driver.Backend, error)) error {
	b, err := open()
	if err != nil {
		return err
	}
	e, err := upgradetest.Open(ctx, b, upgradetest.NewClock(upgradetest.Start), true)
	if err != nil {
		b.Close()
		return err
	}
	if err := upgradetest.Build(ctx, e); err != nil {
		e.Close()
		return err
	}
	return e.Close()
}

// importRows adds rows the way an importer of a MemU memory.db does: plain
// SQL into MemU's columns, which the memories_import trigger completes.
func importRows(ctx context.Context, path string) error {
	db, err := sql.Open("sqlite", path)
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.ExecContext(ctx, `INSERT INTO memories (content, type, significance, entities, emotional_context, source, created_at, updated_at)
		VALUES ('Ivan imported this from MemU', 'fact', 4, '["Ivan"]', '', 'memu:1', '2025-02-01 10:00:00', '2025-02-01 10:00:00'),
		       ('A second imported MemU memory', 'event', 5, '[]', 'calm', 'memu:2', '2025-02-02T11:00:00', '2025-02-02T11:00:00')`)
	return err
}

func answer(ctx context.Context, out, name string, open func() (driver.Backend, error)) error {
	b, err := open()
	if err != nil {
		return err
	}
	e, err := upgradetest.Open(ctx, b, upgradetest.NewClock(upgradetest.Start), false)
	if err != nil {
		b.Close()
		return err
	}
	defer e.Close()
	ans, err := upgradetest.Answers(ctx, b, e, upgradetest.MaxID)
	if err != nil {
		return err
	}
	if err := writeGzip(filepath.Join(out, name+"-answers.json.gz"), ans); err != nil {
		return err
	}
	rev, err := upgradetest.Revert(ctx, e)
	if err != nil {
		return err
	}
	return writeGzip(filepath.Join(out, name+"-revert.json.gz"), rev)
}

// tarDir writes the directory name under root, with its files, as a
// gzipped tar file at dst (names relative to root, fixed times and modes).
func tarDir(root, name, dst string) error {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	err := filepath.WalkDir(filepath.Join(root, name), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		h := &tar.Header{Name: filepath.ToSlash(rel), ModTime: upgradetest.Start, Mode: 0o600, Typeflag: tar.TypeReg}
		var b []byte
		if d.IsDir() {
			h.Name += "/"
			h.Mode, h.Typeflag = 0o700, tar.TypeDir
		} else if b, err = os.ReadFile(p); err != nil {
			return err
		}
		h.Size = int64(len(b))
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		_, err = tw.Write(b)
		return err
	})
	if err == nil {
		err = tw.Close()
	}
	if err != nil {
		return err
	}
	return writeGzip(dst, buf.Bytes())
}

func gzipFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return writeGzip(dst, b)
}

func writeGzip(dst string, b []byte) error {
	f, err := os.Create(dst)
	if err != nil {
		return err
	}
	zw, _ := gzip.NewWriterLevel(f, gzip.BestCompression)
	if _, err := zw.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := zw.Close(); err != nil {
		f.Close()
		return err
	}
	fmt.Println("wrote", dst)
	return f.Close()
}

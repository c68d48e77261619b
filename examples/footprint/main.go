// Command footprint measures what a store costs on disk per memory: it
// ingests real conversation turns (LoCoMo and LongMemEval dev, replicated
// up to -n) with the hash embedder into a fresh store, optionally edits a
// share of them (new versions), closes the store (which checkpoints it) and
// reports the size of the store's files, the vector snapshot, and both against the
// content and one embedding per memory.
//
//	go run ./examples/footprint -backend sqlite -n 100000
//	go run ./examples/footprint -backend bolt -n 100000 -edit 0.3 -keep /tmp/fp
//
// The data is read from ../shared/data (never copied into the repository).
package main

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"

	"github.com/memos-go/memos/backends/bolt"
	"github.com/memos-go/memos/backends/sqlite"
	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/core/bench/dataset"
	"github.com/memos-go/memos/embedders/hash"
)

func main() {
	backend := flag.String("backend", "sqlite", "sqlite or bolt")
	n := flag.Int("n", 100_000, "memories to ingest (the dev turns, replicated)")
	edit := flag.Float64("edit", 0, "share of memories that then get a second version (half a metadata change, half a content change)")
	data := flag.String("data", "../shared/data", "the shared data directory")
	keep := flag.String("keep", "", "build the store in this directory and keep it (default: a temporary one)")
	flag.Parse()
	if err := run(context.Background(), *backend, *n, *edit, *data, *keep); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, backend string, n int, edit float64, data, keep string) error {
	turns, err := loadTurns(data)
	if err != nil {
		return err
	}
	dir := keep
	if dir == "" {
		if dir, err = os.MkdirTemp("", "footprint"); err != nil {
			return err
		}
		defer os.RemoveAll(dir)
	} else if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	b, store, err := openBackend(ctx, backend, dir)
	if err != nil {
		return err
	}
	emb, err := hash.New(hash.Config{})
	if err != nil {
		return err
	}
	snap := store + ".vectors"
	e, err := core.Open(ctx, core.Options{Backend: b, Embedder: emb, VectorSnapshot: snap})
	if err != nil {
		return err
	}
	start := time.Now()
	ids, content, err := ingest(ctx, e, turns, n)
	if err != nil {
		return err
	}
	ingestTook := time.Since(start)
	edits := int(edit * float64(n))
	if err := editSome(ctx, e, ids, edits); err != nil {
		return err
	}
	if err := e.Close(); err != nil {
		return err
	}
	var storeBytes int64
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && p != snap {
			storeBytes += size(p)
		}
		return nil
	})
	snapBytes := size(snap)
	info, err := emb.Info(ctx)
	if err != nil {
		return err
	}
	vec := int64(n) * int64(info.Dim) * 4
	fmt.Printf("backend %s, %d memories (%d distinct turns), %d edited, ingest %.1f s (%.0f/s)\n",
		backend, n, len(turns), edits, ingestTook.Seconds(), float64(n)/ingestTook.Seconds())
	fmt.Printf("content %.1f MiB (%.0f B/memory), embeddings %.1f MiB (%d B/memory)\n",
		mib(content), float64(content)/float64(n), mib(vec), vec/int64(n))
	fmt.Printf("store %.1f MiB (%.0f B/memory, %.2f× content+embedding)\n",
		mib(storeBytes), float64(storeBytes)/float64(n), float64(storeBytes)/float64(content+vec))
	if backend == "bolt" {
		// The store of record and the keyword index, each against its share.
		file := size(filepath.Join(store, bolt.StoreFile))
		var index int64
		filepath.WalkDir(filepath.Join(store, bolt.IndexDir), func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				index += size(p)
			}
			return nil
		})
		fmt.Printf("  bbolt %.1f MiB (%.2f× content+embedding), bleve %.1f MiB (%.2f× content)\n",
			mib(file), float64(file)/float64(content+vec), mib(index), float64(index)/float64(content))
	}
	fmt.Printf("snapshot %.1f MiB (%.0f B/memory, %.3f× the vectors)\n",
		mib(snapBytes), float64(snapBytes)/float64(n), float64(snapBytes)/float64(vec))
	fmt.Printf("store + snapshot %.1f MiB (%.2f× content+embedding)\n",
		mib(storeBytes+snapBytes), float64(storeBytes+snapBytes)/float64(content+vec))
	return nil
}

// loadTurns reads the turns of LoCoMo dev and LongMemEval-S dev100 under
// data, without the turns that have no text.
func loadTurns(data string) ([]core.Input, error) {
	var turns []core.Input
	for _, load := range []func() (*dataset.Dataset, error){
		func() (*dataset.Dataset, error) {
			return dataset.LoadLoCoMo(filepath.Join(data, "locomo", "locomo-dev.json"), dataset.Options{})
		},
		func() (*dataset.Dataset, error) {
			return dataset.LoadLongMemEval(filepath.Join(data, "longmemeval", "longmemeval-s-dev100.json.gz"), dataset.Options{})
		},
	} {
		d, err := load()
		if err != nil {
			return nil, err
		}
		for _, c := range d.Corpora {
			for _, doc := range c.Docs {
				// A few turns are only an image: no text to store.
				if strings.IndexFunc(doc.Input.Content, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0 {
					turns = append(turns, doc.Input)
				}
			}
		}
	}
	return turns, nil
}

// openBackend opens a new store of backend in dir and returns its path.
func openBackend(ctx context.Context, backend, dir string) (core.Backend, string, error) {
	var b core.Backend
	var err error
	var store string
	switch backend {
	case "sqlite":
		store = filepath.Join(dir, "memory.db")
		b, err = sqlite.Open(ctx, sqlite.Config{Path: store})
	case "bolt":
		store = filepath.Join(dir, "memory.bolt")
		b, err = bolt.Open(ctx, bolt.Config{Path: store})
	default:
		return nil, "", fmt.Errorf("unknown backend %q", backend)
	}
	return b, store, err
}

// ingest remembers n memories, the turns over and over (each copy another
// conversation), and returns their ids and the bytes of content.
func ingest(ctx context.Context, e *core.Engine, turns []core.Input, n int) ([]int64, int64, error) {
	var content int64
	const batch = 500
	ids := make([]int64, 0, n)
	for i := 0; i < n; i += batch {
		ins := make([]core.Input, 0, batch)
		for j := i; j < min(n, i+batch); j++ {
			in := turns[j%len(turns)]
			in.Session = fmt.Sprintf("%s#%d", in.Session, j/len(turns)) // copies are other conversations
			content += int64(len(in.Content))
			ins = append(ins, in)
		}
		ms, err := e.RememberBatch(ctx, ins)
		if err != nil {
			return nil, 0, err
		}
		for _, m := range ms {
			ids = append(ids, m.ID)
		}
	}
	return ids, content, nil
}

// editSome edits edits of the memories ids, spread over them: every other
// one its metadata, the others their content.
func editSome(ctx context.Context, e *core.Engine, ids []int64, edits int) error {
	for i := range edits {
		id := ids[(i*7919)%len(ids)]
		var p core.Patch
		if i%2 == 0 {
			md := map[string]any{"reviewed": true}
			p.Metadata = &md
		} else {
			m, err := e.Get(ctx, id)
			if err != nil {
				return err
			}
			c := m.Content + " (edited)"
			p.Content = &c
		}
		if _, err := e.Update(ctx, id, p); err != nil {
			return err
		}
	}
	return nil
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// size is the size of the file at path, 0 when there is none.
func size(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

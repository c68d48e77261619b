package bolt_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memos-go/memos/backends/bolt"
	"github.com/memos-go/memos/core"
)

// A zero-length bolt store file is more likely a truncated store than a new
// one: Open refuses it and leaves it as it is.
func TestOpenRefusesEmptyFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "memory.bolt")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, bolt.StoreFile)
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := bolt.Open(context.Background(), bolt.Config{Path: dir})
	if err == nil {
		b.Close()
		t.Fatal("opened a zero-length store file as a new store")
	}
	if !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), "empty (0 bytes)") || !strings.Contains(err.Error(), "backup") {
		t.Fatalf("error = %v; want ErrInvalid saying the file is empty and what to do", err)
	}
	if st, err := os.Stat(file); err != nil || st.Size() != 0 {
		t.Fatalf("the empty file was changed: %v, %v", st, err)
	}
	// A missing directory is still a new store, with no temporary file left.
	fresh := filepath.Join(t.TempDir(), "memory.bolt")
	b, err = bolt.Open(context.Background(), bolt.Config{Path: fresh})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	left, _ := filepath.Glob(filepath.Join(fresh, ".*.new-*"))
	if len(left) != 0 {
		t.Fatalf("temporary files left beside the store: %v", left)
	}
}

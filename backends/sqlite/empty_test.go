package sqlite_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memos-go/memos/backends/sqlite"
	"github.com/memos-go/memos/core"
)

// A zero-length memory.db is more likely a truncated store than a new one:
// Open refuses it and leaves it as it is.
func TestOpenRefusesEmptyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.db")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := sqlite.Open(context.Background(), sqlite.Config{Path: path})
	if err == nil {
		b.Close()
		t.Fatal("opened a zero-length memory.db as a new store")
	}
	if !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), "empty (0 bytes)") || !strings.Contains(err.Error(), "backup") {
		t.Fatalf("error = %v; want ErrInvalid saying the file is empty and what to do", err)
	}
	if st, err := os.Stat(path); err != nil || st.Size() != 0 {
		t.Fatalf("the empty file was changed: %v, %v", st, err)
	}
	// A missing file is still a new store, and never appears empty.
	fresh := filepath.Join(t.TempDir(), "memory.db")
	b, err = sqlite.Open(context.Background(), sqlite.Config{Path: fresh})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(fresh); err != nil || st.Size() == 0 {
		t.Fatalf("new store file: %v, %v", st, err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(fresh), ".memory.db.new-*"))
	if len(left) != 0 {
		t.Fatalf("temporary files left beside the store: %v", left)
	}
}

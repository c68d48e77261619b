package bolt

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/memos-go/memos/core/driver"
)

// openTestDB opens a new store in a temporary directory, closed at the end
// of the test.
func openTestDB(t testing.TB) *DB {
	t.Helper()
	d, err := Open(context.Background(), Config{Path: filepath.Join(t.TempDir(), "store")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

var testTime = time.Date(2025, time.March, 14, 15, 9, 26, 0, time.UTC)

// testMemory returns a valid version-1 memory with content.
func testMemory(content string) *driver.Memory {
	return &driver.Memory{
		Version:      1,
		Namespace:    driver.DefaultNamespace,
		Pool:         driver.PoolMemory,
		Type:         driver.TypeFact,
		Content:      content,
		Significance: 5,
		Trust:        driver.Trust{Level: driver.TrustCertain, Score: 1},
		CreatedAt:    testTime,
		UpdatedAt:    testTime,
		Status:       driver.StatusActive,
	}
}

// secretMemory is a memory with the secret word in its content and its
// namespace. Records keep their content packed (DEFLATE), so the raw word
// is not in the bbolt file through the content; the record's head keeps
// the namespace as it is, and the keyword index lists it as a term, so a
// search of the files' bytes for the word finds the record in both stores
// until a forget scrubs them.
func secretMemory(content string) *driver.Memory {
	m := testMemory(content)
	m.Namespace = "vault:" + secretWord
	m.Session = "session:" + secretWord // named by the secondary indexes (sesn) too
	return m
}

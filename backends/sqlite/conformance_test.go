package sqlite_test

import (
	"context"
	"testing"

	"github.com/memos-go/memos/backends/sqlite"
	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/core/backendtest"
)

func TestConformance(t *testing.T) {
	backendtest.Run(t, backendtest.Harness{
		Name: sqlite.Name,
		Open: func(_ testing.TB, path string) (core.Backend, error) {
			return sqlite.Open(context.Background(), sqlite.Config{Path: path})
		},
	})
}

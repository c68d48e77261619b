package postgres_test

import (
	"context"
	"testing"

	"github.com/memos-go/memos/backends/postgres"
	"github.com/memos-go/memos/core/backendtest"
	"github.com/memos-go/memos/core/driver"
)

func TestConformance(t *testing.T) {
	dsn := testDSN(t)
	backendtest.Run(t, backendtest.Harness{
		Name: postgres.Name,
		// Each case's path names its own schema.
		Open: func(tb testing.TB, path string) (driver.Backend, error) {
			return postgres.Open(context.Background(), postgres.Config{DSN: dsn, Schema: schemaFor(tb, dsn, path)})
		},
	})
}

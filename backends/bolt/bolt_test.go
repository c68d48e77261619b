package bolt

import (
	"context"
	"testing"

	"github.com/memos-go/memos/core/backendtest"
	"github.com/memos-go/memos/core/driver"
)

func TestConformance(t *testing.T) {
	backendtest.Run(t, backendtest.Harness{
		Name:      Name,
		Exclusive: true,
		Open: func(t testing.TB, path string) (driver.Backend, error) {
			return Open(context.Background(), Config{Path: path})
		},
	})
}

func TestConformanceRegistered(t *testing.T) {
	backendtest.RunRegistered(t, backendtest.Harness{Name: Name, Exclusive: true})
}

func BenchmarkBackend(b *testing.B) {
	backendtest.RunBenchmarks(b, backendtest.Harness{
		Name:      Name,
		Exclusive: true,
		Open: func(_ testing.TB, path string) (driver.Backend, error) {
			return Open(context.Background(), Config{Path: path})
		},
	})
}

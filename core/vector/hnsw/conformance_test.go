package hnsw

import (
	"testing"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/vector"
	"github.com/memos-go/memos/core/vector/vectortest"
)

// conformanceConfig is the default Config, except under the race detector,
// where the kit's 3000-vector recall case at ef 400 takes most of a minute;
// ef 100 passes it as well.
func conformanceConfig() Config {
	if raceEnabled {
		return Config{EfConstruction: 100, EfSearch: 100}
	}
	return Config{}
}

func TestConformance(t *testing.T) {
	vectortest.Run(t, func(dim int) driver.VectorIndex {
		ix, err := New(dim, conformanceConfig())
		if err != nil {
			t.Fatal(err)
		}
		return ix
	}, false)
}

// TestConformanceGraphOnly runs the kit with filtered scans turned off, so
// that its filter cases exercise the filtered graph walk.
func TestConformanceGraphOnly(t *testing.T) {
	vectortest.Run(t, func(dim int) driver.VectorIndex {
		cfg := conformanceConfig()
		cfg.ExactBelow = -1
		ix, err := New(dim, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return ix
	}, false)
}

// TestConformanceInt8 runs the kit on an index storing its vectors as int8
// (vector.Int8): scores within 0.02 of the cosine similarity.
func TestConformanceInt8(t *testing.T) {
	vectortest.RunReduced(t, func(dim int) driver.VectorIndex {
		cfg := conformanceConfig()
		cfg.Precision = vector.Int8
		ix, err := New(dim, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return ix
	}, 0.02)
}

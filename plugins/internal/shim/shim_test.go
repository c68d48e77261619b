package shim

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/memos-go/memos/core/driver"
)

func TestEncodeDecodeRoundTrip(t *testing.T) {
	in := [][]float32{{1, -2.5, float32(math.Inf(1))}, {0, float32(math.SmallestNonzeroFloat32), -0}}
	data, dim, err := encode(in)
	if err != nil || dim != 3 || len(data) != 24 {
		t.Fatalf("encode: %d bytes, dim %d, %v", len(data), dim, err)
	}
	out, err := decode(data, dim)
	if err != nil {
		t.Fatal(err)
	}
	for i := range in {
		if !slices.Equal(in[i], out[i]) {
			t.Fatalf("vector %d: %v != %v", i, out[i], in[i])
		}
	}
	// Appending to one vector must not overwrite the next.
	_ = append(out[0], 42)
	if out[1][0] != 0 {
		t.Fatal("vectors share capacity")
	}
}

func TestEncodeRagged(t *testing.T) {
	_, _, err := encode([][]float32{{1, 2}, {3}})
	if !errors.Is(err, driver.ErrDimensionMismatch) {
		t.Fatalf("got %v", err)
	}
}

func TestDecodeMalformed(t *testing.T) {
	for _, tc := range []struct {
		n, dim int
	}{{7, 1}, {8, 0}, {12, 2}} {
		if _, err := decode(make([]byte, tc.n), tc.dim); err == nil {
			t.Errorf("%d bytes, dim %d: no error", tc.n, tc.dim)
		}
	}
	if vs, err := decode(nil, 0); err != nil || len(vs) != 0 {
		t.Fatalf("empty: %v %v", vs, err)
	}
}

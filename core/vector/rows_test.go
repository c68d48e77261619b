package vector

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/memos-go/memos/core/driver"
)

func TestParsePrecision(t *testing.T) {
	for s, want := range map[string]Precision{"": Float32, "float32": Float32, "int8": Int8} {
		if got, err := ParsePrecision(s); err != nil || got != want {
			t.Errorf("ParsePrecision(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"float16", "INT8", "int4"} {
		_, err := ParsePrecision(s)
		if !errors.Is(err, driver.ErrInvalid) || !strings.Contains(err.Error(), s) || !strings.Contains(err.Error(), "float32, int8") {
			t.Errorf("ParsePrecision(%q) = %v; want an ErrInvalid naming it and the known precisions", s, err)
		}
	}
}

// unitVecs returns n random unit vectors of dim components.
func unitVecs(rng *rand.Rand, n, dim int) [][]float32 {
	out := make([][]float32, n)
	for i := range out {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		Normalize(v)
		out[i] = v
	}
	return out
}

// TestRowsInt8 checks the quantized rows against float32: a stored row is
// unit length, a score is within 0.01 of the float32 one (at 256
// dimensions), Row decodes what Dot scores, and Set, Move, Clear, Truncate
// and Equal keep rows apart.
func TestRowsInt8(t *testing.T) {
	const dim = 256
	rng := rand.New(rand.NewPCG(7, 8))
	vs := unitVecs(rng, 50, dim)
	r := NewRows(dim, Int8)
	for _, v := range vs {
		r.Append(v)
	}
	q := unitVecs(rng, 1, dim)[0]
	var buf []float32
	worst := 0.0
	for i, v := range vs {
		row := r.Row(i, buf)
		if n := Dot(row, row); math.Abs(float64(n)-1) > 1e-4 {
			t.Fatalf("row %d has squared length %v", i, n)
		}
		if d := math.Abs(float64(r.Dot(q, i) - Dot(q, v))); d > worst {
			worst = d
		}
		if d := math.Abs(float64(r.Dot(q, i) - Dot(q, row))); d > 1e-5 {
			t.Fatalf("row %d: Dot %v, the decoded row's %v", i, r.Dot(q, i), Dot(q, row))
		}
		if self := r.Dot(v, i); self < driver.HoldsSimilarity {
			t.Fatalf("row %d: similarity to its own vector %v", i, self)
		}
		if !r.Equal(i, v) || r.Equal(i, vs[(i+1)%len(vs)]) {
			t.Fatalf("row %d: Equal does not tell its vector from the next", i)
		}
	}
	if worst > 0.01 {
		t.Fatalf("int8 scores differ from float32 by up to %v", worst)
	}
	r.Move(0, 1)
	r.Set(1, vs[0])
	r.Clear(2)
	r.Truncate(3)
	if r.Len() != 3 || !r.Equal(0, vs[1]) || !r.Equal(1, vs[0]) || r.Dot(q, 2) != 0 {
		t.Fatalf("after Move, Set, Clear, Truncate: len %d, rows %v %v, cleared row scores %v", r.Len(), r.Equal(0, vs[1]), r.Equal(1, vs[0]), r.Dot(q, 2))
	}
	if got, want := r.Bytes(), int64(cap(r.codes)+4*cap(r.scale)); got != want || cap(r.codes) < 3*dim {
		t.Fatalf("Bytes = %d, want %d", got, want)
	}
}

// TestExactInt8Recall: an Int8 exact index returns nearly the float32 top
// 10 on a seeded set of clustered vectors (the regime of text embeddings:
// neighbours stand apart from the rest).
func TestExactInt8Recall(t *testing.T) {
	ctx := context.Background()
	const dim, n, queries, k = 128, 5000, 100, 10
	rng := rand.New(rand.NewPCG(9, 10))
	centres := unitVecs(rng, 50, dim)
	f32, i8 := NewExact(dim), NewExactPrecision(dim, Int8)
	point := func() []float32 {
		c := centres[rng.IntN(len(centres))]
		v := make([]float32, dim)
		for j := range v {
			v[j] = c[j] + 0.08*float32(rng.NormFloat64())
		}
		return v
	}
	es := make([]driver.VectorEntry, n)
	for i := range es {
		es[i] = driver.VectorEntry{ID: int64(i + 1), Vector: point()}
	}
	for _, x := range []*Exact{f32, i8} {
		if err := x.Add(ctx, es...); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := i8.MemoryBytes(), f32.MemoryBytes(); got*2 > want {
		t.Fatalf("int8 index holds %d bytes, float32 %d: not half", got, want)
	}
	found, worst := 0, 0.0
	for range queries {
		q := point()
		want, err := f32.Search(ctx, q, k, driver.VectorFilter{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := i8.Search(ctx, q, k, driver.VectorFilter{})
		if err != nil {
			t.Fatal(err)
		}
		in := map[int64]float64{}
		for _, h := range want {
			in[h.ID] = h.Score
		}
		for _, h := range got {
			if s, ok := in[h.ID]; ok {
				found++
				worst = max(worst, math.Abs(s-h.Score))
			}
		}
	}
	recall := float64(found) / (queries * k)
	t.Logf("recall@10 of int8 against float32: %.4f; largest score difference %.4f", recall, worst)
	if recall < 0.95 || worst > 0.01 {
		t.Fatalf("recall@10 %.4f (want ≥ 0.95), score difference up to %.4f (want ≤ 0.01)", recall, worst)
	}
}

// TestDotInt8 checks the SIMD kernel (where the CPU has it) against the Go
// loop for every length up to 300, odd tails included.
func TestDotInt8(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for n := range 300 {
		q := make([]float32, n)
		c := make([]int8, n+5)
		for i := range q {
			q[i] = float32(rng.NormFloat64())
		}
		for i := range c {
			c[i] = int8(rng.IntN(255) - 127)
		}
		got, want := dotInt8(q, c), dotInt8Go(q, c)
		var mag float64
		for i := range q {
			mag += math.Abs(float64(q[i]) * float64(c[i]))
		}
		if math.Abs(float64(got-want)) > 1e-5*(mag+1) {
			t.Fatalf("n=%d: dotInt8 %v, the Go loop %v", n, got, want)
		}
	}
}

// BenchmarkDot compares a float32 row (SIMD Dot) with an int8 one (dotInt8,
// and the Go loop it falls back to) at the embedders' dimensions.
func BenchmarkDot(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, dim := range []int{100, 256, 384} {
		vs := unitVecs(rng, 1024, dim)
		q := unitVecs(rng, 1, dim)[0]
		f32, i8 := NewRows(dim, Float32), NewRows(dim, Int8)
		for _, v := range vs {
			f32.Append(v)
			i8.Append(v)
		}
		var sink float32
		b.Run(fmt.Sprintf("dim=%d/float32", dim), func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				sink += f32.Dot(q, i%1024)
			}
		})
		b.Run(fmt.Sprintf("dim=%d/int8", dim), func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				sink += i8.Dot(q, i%1024)
			}
		})
		b.Run(fmt.Sprintf("dim=%d/int8-go", dim), func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				r := i % 1024
				sink += dotInt8Go(q, i8.codes[r*dim:(r+1)*dim]) * i8.scale[r]
			}
		})
		_ = sink
	}
}

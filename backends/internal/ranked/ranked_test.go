package ranked

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/memos-go/memos/core/driver"
)

// TestAfter checks that the ranges After returns, read in turn as SQL
// evaluates their conditions (a comparison with NULL is not true), list
// exactly the keys after a key in rank order, for every key of a set full
// of ties and NULLs.
func TestAfter(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	times := []string{"", "2025-01-01T00:00:00.000000000Z", "2025-01-02T00:00:00.000000000Z", "2025-01-02 00:00:00"}
	var keys []Key
	for id := range int64(300) {
		k := Key{Significance: 1 + rng.IntN(3), AccessCount: int64(rng.IntN(3)), ID: id + 1}
		if i := rng.IntN(len(times) + 1); i < len(times) {
			k.LastAccessed = &times[i]
		}
		keys = append(keys, k)
	}
	rank := func(a, b Key) int {
		if c := cmp.Compare(b.Significance, a.Significance); c != 0 {
			return c
		}
		if c := cmp.Compare(b.AccessCount, a.AccessCount); c != 0 {
			return c
		}
		switch {
		case a.LastAccessed == nil && b.LastAccessed != nil:
			return 1
		case a.LastAccessed != nil && b.LastAccessed == nil:
			return -1
		case a.LastAccessed != nil:
			if c := cmp.Compare(*b.LastAccessed, *a.LastAccessed); c != 0 {
				return c
			}
		}
		return cmp.Compare(a.ID, b.ID)
	}
	slices.SortFunc(keys, rank)
	in := func(r Range, k, x Key) bool {
		for _, c := range r.Conds() {
			var ok bool
			switch c.Column {
			case Significance:
				ok = compare(c.Op, x.Significance, k.Significance)
			case AccessCount:
				ok = compare(c.Op, x.AccessCount, k.AccessCount)
			case ID:
				ok = compare(c.Op, x.ID, k.ID)
			case LastAccessed:
				if c.Op == Null {
					ok = x.LastAccessed == nil
				} else {
					ok = x.LastAccessed != nil && compare(c.Op, *x.LastAccessed, *k.LastAccessed)
				}
			}
			if !ok {
				return false
			}
		}
		return true
	}
	for i, k := range keys {
		var got []Key
		for _, r := range After(k) {
			for _, x := range keys { // in rank order, as the index lists them
				if in(r, k, x) {
					got = append(got, x)
				}
			}
			params := 0
			r.Where(func(Column) string { return "c" }, func() string { params++; return "?" })
			if n := len(r.Args(k)); n != params {
				t.Fatalf("range %d: Where has %d placeholders, Args %d values", r, params, n)
			}
		}
		if !slices.Equal(got, keys[i+1:]) {
			t.Fatalf("after %+v: the ranges list %d keys, want the %d after it in rank order", k, len(got), len(keys)-i-1)
		}
	}
}

func compare[T cmp.Ordered](op Op, x, k T) bool {
	switch op {
	case Eq:
		return x == k
	case Less:
		return x < k
	case Greater:
		return x > k
	}
	return false
}

// TestWalk checks Walk's pages against a slice in rank order: every memory
// once, in order, whatever the number of memories (pages end at 64, 192,
// 448, ...), and a stop by fn ends the walk with its error.
func TestWalk(t *testing.T) {
	for _, n := range []int{0, 1, 63, 64, 65, 192, 1000, 2 * Max} {
		var keys []Key
		for id := range int64(n) {
			keys = append(keys, Key{Significance: 5, AccessCount: id % 2, ID: id + 1})
		}
		slices.SortFunc(keys, func(a, b Key) int {
			return cmp.Or(cmp.Compare(b.AccessCount, a.AccessCount), cmp.Compare(a.ID, b.ID))
		})
		var got []int64
		reads := 0
		err := Walk(func(r Range, k Key, limit int) ([]Row, error) {
			var rows []Row
			for _, x := range keys {
				after := r == All || (r == NeverAfter && x.AccessCount == k.AccessCount && x.ID > k.ID) ||
					(r == FewerAccesses && x.AccessCount < k.AccessCount)
				if after && len(rows) < limit {
					rows = append(rows, Row{Memory: &driver.Memory{ID: x.ID, Significance: x.Significance, AccessCount: x.AccessCount}})
				}
			}
			reads += len(rows)
			return rows, nil
		}, func(m *driver.Memory) error {
			got = append(got, m.ID)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		want := make([]int64, 0, n)
		for _, k := range keys {
			want = append(want, k.ID)
		}
		if !slices.Equal(got, want) || reads != n {
			t.Errorf("Walk over %d memories: %d memories read, %d returned, want each once in order", n, reads, len(got))
		}
	}
}

package ranked

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/memos-go/memos/core/driver"
)

// TestListPages checks ListPages against a slice in list order, with a
// page function that evaluates each range's conditions as SQL would over
// an index in that order: from the start and from every key, every memory
// after it once, in order, across pages that end inside runs of ties; the
// ranges' placeholders match their values; and a stop by fn ends the read
// with its error.
func TestListPages(t *testing.T) {
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var ms []*driver.Memory
	for id := range int64(700) {
		ms = append(ms, &driver.Memory{ID: id + 1, Significance: 1 + int(id%3), CreatedAt: base.Add(time.Duration(id%4) * time.Second)})
	}
	in := func(r ListRange, k *driver.ListKey, m *driver.Memory) bool {
		for _, c := range r {
			var ok bool
			switch c.Column {
			case Significance:
				ok = compare(c.Op, m.Significance, k.Significance)
			case Created:
				ok = compare(c.Op, m.CreatedAt.UnixNano(), k.CreatedAt.UnixNano())
			case ID:
				ok = compare(c.Op, m.ID, k.ID)
			}
			if !ok {
				return false
			}
		}
		return true
	}
	for _, o := range []driver.ListOrder{driver.ListRecent, driver.ListSignificant} {
		for _, r := range ListAfter(o) {
			params := 0
			r.Where(func(Column) string { return "c" }, func() string { params++; return "?" })
			if n := len(r.Args(driver.ListKey{}, "")); n != params {
				t.Errorf("order %d: range %v has %d placeholders and %d values", o, r, params, n)
			}
		}
		sorted := slices.Clone(ms)
		slices.SortFunc(sorted, func(a, b *driver.Memory) int { return o.Compare(driver.KeyOf(a), driver.KeyOf(b)) })
		for start := -1; start < len(sorted); start += 13 {
			var after *driver.ListKey
			if start >= 0 {
				k := driver.KeyOf(sorted[start])
				after = &k
			}
			var got []int64
			err := ListPages(o, after, func(i int, r ListRange, k *driver.ListKey, limit int) ([]*driver.Memory, error) {
				if (i == 0) != (k == nil) || i > 0 && !slices.EqualFunc(r, ListAfter(o)[i-1], func(a, b Cond) bool { return a == b }) {
					return nil, fmt.Errorf("range %d is %v after %v", i, r, k)
				}
				var page []*driver.Memory
				for _, m := range sorted {
					if len(page) < limit && (k == nil || in(r, k, m)) {
						page = append(page, m)
					}
				}
				return page, nil
			}, func(m *driver.Memory) error {
				got = append(got, m.ID)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			var want []int64
			for _, m := range sorted[start+1:] {
				want = append(want, m.ID)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("order %d after position %d: %d memories, want %d", o, start, len(got), len(want))
			}
		}
		stop := errors.New("stop")
		seen := 0
		err := ListPages(o, nil, func(_ int, _ ListRange, _ *driver.ListKey, limit int) ([]*driver.Memory, error) {
			return sorted[:min(limit, len(sorted))], nil
		}, func(*driver.Memory) error {
			if seen++; seen == 10 {
				return stop
			}
			return nil
		})
		if !errors.Is(err, stop) || seen != 10 {
			t.Errorf("a read whose fn stops at 10: %d memories, %v", seen, err)
		}
	}
}

package sqlrow

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/memos-go/memos/core/driver"
)

// row is a Scanner over stored column values, converting them as
// database/sql does for the destination types ScanMemory uses.
type row []any

func (r row) Scan(dest ...any) error {
	if len(dest) != len(r) {
		return fmt.Errorf("%d destinations for %d columns", len(dest), len(r))
	}
	for i, d := range dest {
		switch d := d.(type) {
		case **string:
			switch v := r[i].(type) {
			case nil:
				*d = nil
			case string:
				*d = &v
			default:
				return fmt.Errorf("column %d: %T into *string", i, v)
			}
		default:
			if r[i] == nil { // a NULL blob
				continue
			}
			reflect.ValueOf(d).Elem().Set(reflect.ValueOf(r[i]).Convert(reflect.TypeOf(d).Elem()))
		}
	}
	return nil
}

// A memory written with MemoryArgs reads back equal with ScanMemory, in
// both forms; the forms differ only where a value is empty.
func TestMemoryRoundTrip(t *testing.T) {
	at := time.Date(2025, 3, 1, 9, 0, 0, 5, time.UTC)
	full := &driver.Memory{ID: 4, Version: 2, Namespace: "default", Pool: "memory", Type: "fact", Content: "x",
		Significance: 5, Entities: []string{"a"}, Trust: driver.Trust{Level: "certain", Score: 1}, ValidFrom: at,
		CreatedAt: at, UpdatedAt: at.Add(time.Second), Status: "active", Metadata: map[string]any{"k": "v"},
		Embedding: driver.Embedding{Model: "m", Vector: []float32{0.5, -1}}, LastAccessedAt: at, AccessCount: 3}
	empty := &driver.Memory{ID: 5, Version: 1, Namespace: "default"}
	for _, memu := range []bool{true, false} {
		for _, m := range []*driver.Memory{full, empty} {
			args, err := InsertArgs(m, memu)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ScanMemory(row(args))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, m) {
				t.Errorf("memu %v: read back %+v, want %+v", memu, got, m)
			}
		}
	}
	args, _ := MemoryArgs(empty, true)
	if args[7] != "[]" || args[15] != "" || args[16] != "" || args[13] != nil {
		t.Errorf("MemU forms: entities %#v, created %#v, updated %#v, valid_from %#v", args[7], args[15], args[16], args[13])
	}
	args, _ = MemoryArgs(empty, false)
	if args[7] != nil || args[15] != nil || args[16] != nil {
		t.Errorf("NULL forms: entities %#v, created %#v, updated %#v", args[7], args[15], args[16])
	}
	if _, err := MemoryArgs(&driver.Memory{CreatedAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}, false); !errors.Is(err, driver.ErrInvalid) {
		t.Errorf("year 10000: %v, want ErrInvalid", err)
	}
}

// Rows imported with plain SQL may hold SQLite's own time formats.
func TestDecodeTimeFormats(t *testing.T) {
	want := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	for _, s := range []string{"2024-05-06T07:08:09Z", "2024-05-06 07:08:09", "2024-05-06T07:08:09", "2024-05-06 07:08:09+00:00"} {
		if got, err := DecodeTime("t", &s); err != nil || !got.Equal(want) {
			t.Errorf("DecodeTime(%q) = %v, %v", s, got, err)
		}
	}
	bad := "yesterday"
	if _, err := DecodeTime("t", &bad); err == nil || !strings.Contains(err.Error(), `t "yesterday" is not an RFC 3339 time`) {
		t.Errorf("DecodeTime(yesterday) = %v", err)
	}
}

// ScanPages reads pages after AfterID up to Limit; ChangePages starts
// after every change at since.
func TestPages(t *testing.T) {
	var asked []string
	page := func(after int64, n int) ([]*driver.Memory, error) {
		asked = append(asked, fmt.Sprintf("%d+%d", after, n))
		var ms []*driver.Memory
		for id := after + 1; id <= min(after+int64(n), 10); id++ {
			ms = append(ms, &driver.Memory{ID: id})
		}
		return ms, nil
	}
	var got []int64
	err := ScanPages(driver.ScanOptions{AfterID: 2, Limit: 5}, 3, page, func(m *driver.Memory) error { got = append(got, m.ID); return nil })
	if err != nil || fmt.Sprint(got) != "[3 4 5 6 7]" || fmt.Sprint(asked) != "[2+3 5+2]" {
		t.Errorf("ScanPages = %v, %v after asking %v", got, err, asked)
	}
	if err := ScanPages(driver.ScanOptions{Limit: -1}, 3, page, nil); !errors.Is(err, driver.ErrInvalid) {
		t.Errorf("limit -1: %v", err)
	}
	called := false
	err = ChangePages(1<<63, 3, 0, func(int64, int64, int) ([]driver.Change, error) { called = true; return nil, nil }, nil)
	if err != nil || called {
		t.Errorf("changes since 2^63: %v, read %v", err, called)
	}
	// Pages of a fixed size, or doubling up to grow; each after the last.
	for _, c := range []struct {
		grow int
		want string
	}{{0, "[0+2 2+2 4+2 6+2 8+2 10+2]"}, {5, "[0+2 2+4 6+5 11+5]"}} {
		asked = nil
		var n int
		err := ChangePages(0, 2, c.grow, func(afterSeq, _ int64, size int) ([]driver.Change, error) {
			asked = append(asked, fmt.Sprintf("%d+%d", afterSeq, size))
			var cs []driver.Change
			for seq := afterSeq + 1; seq <= min(afterSeq+int64(size), 11); seq++ {
				cs = append(cs, driver.Change{Seq: uint64(seq), ID: seq})
			}
			return cs, nil
		}, func(driver.Change) error { n++; return nil })
		if err != nil || n != 11 || fmt.Sprint(asked) != c.want {
			t.Errorf("grow %d: %d changes, %v, asking %v; want %s", c.grow, n, err, asked, c.want)
		}
	}
}

func TestCommonError(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		ctx     context.Context
		err     error
		ended   bool
		handled bool
		want    error
	}{
		{context.Background(), nil, false, true, nil},
		{context.Background(), context.DeadlineExceeded, false, true, context.DeadlineExceeded},
		{ctx, errors.New("interrupted"), false, true, context.Canceled},
		{context.Background(), sql.ErrTxDone, true, true, driver.ErrClosed},
		{context.Background(), errors.New("other"), false, false, nil},
	} {
		handled, err := CommonError(c.ctx, "op", c.err, c.ended)
		if handled != c.handled || !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
			t.Errorf("CommonError(%v) = %v, %v", c.err, handled, err)
		}
	}
}

func TestFilter(t *testing.T) {
	f := driver.Filter{Namespaces: []string{"a", "b"}, Pools: []driver.Pool{}, Types: []driver.Type{"fact"}}
	q, args := Filter(f, "0", 2, func(vals []string, next int) (string, []any) {
		return fmt.Sprintf(" = ANY($%d)", next+1), []any{vals}
	})
	if q != " AND m.namespace = ANY($3) AND 0 AND m.type = ANY($4)" || fmt.Sprint(args) != "[[a b] [fact]]" {
		t.Errorf("Filter = %q %v", q, args)
	}
}

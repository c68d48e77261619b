package driver_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/query"
)

// getter is a ReadTx that holds the memories of ids.
type getter struct {
	driver.ReadTx
	ids map[int64]bool
}

func (g getter) Get(id int64, v int) (*driver.Memory, error) {
	if !g.ids[id] {
		return nil, driver.MemoryNotFound(id, v)
	}
	return &driver.Memory{ID: id, Version: 1}, nil
}

// link checks e against the memories of getter{7}.
func link(e driver.Edge) error {
	tx := getter{ids: map[int64]bool{7: true}}
	_, err := driver.CheckLink(e, func(op string, id int64) error {
		if _, err := tx.Get(id, 0); err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		return nil
	})
	return err
}

var canceled = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// The checks every backend makes give the contract's errors, in the order
// the backends made them before they shared the checks.
func TestChecks(t *testing.T) {
	tx := getter{ids: map[int64]bool{7: true}}
	for _, c := range []struct {
		name string
		err  error
		want error
		text string
	}{
		{"insert nil", driver.CheckInsert(tx, nil, false), driver.ErrInvalid, "insert: nil memory"},
		{"insert version 2", driver.CheckInsert(tx, &driver.Memory{Version: 2}, false), driver.ErrInvalid, "has version 1, not 2"},
		{"insert at 0", driver.CheckInsert(tx, &driver.Memory{Version: 2}, true), driver.ErrInvalid, "insert at: id 0 is not positive"},
		{"insert at a taken id", driver.CheckInsert(tx, &driver.Memory{ID: 7, Version: 1}, true), driver.ErrConflict, "insert at: memory 7 exists"},
		{"insert at a free id", driver.CheckInsert(tx, &driver.Memory{ID: 8, Version: 1}, true), nil, ""},
		{"insert ignores the id", driver.CheckInsert(tx, &driver.Memory{ID: 7, Version: 1}, false), nil, ""},
		{"put skips a version", driver.CheckPut(&driver.Memory{ID: 3, Version: 5}, 3), driver.ErrConflict, "it is at version 3, so the next version is 4, not 5"},
		{"put the next version", driver.CheckPut(&driver.Memory{ID: 3, Version: 4}, 3), nil, ""},
		{"get version -1", driver.CheckGet(3, -1), driver.ErrInvalid, "get memory 3: version -1 is negative"},
		{"not found", driver.MemoryNotFound(3, 0), driver.ErrNotFound, "memory 3: "},
		{"version not found", driver.MemoryNotFound(3, 2), driver.ErrNotFound, "memory 3 version 2: "},
		{"scan limit -1", driver.CheckScan(driver.ScanOptions{Limit: -1}), driver.ErrInvalid, "scan: limit -1 is negative"},
		{"empty meta key", driver.CheckMetaKey("mine", "mine.", ""), driver.ErrInvalid, "set meta: empty key"},
		{"reserved meta key", driver.CheckMetaKey("mine", "mine.", "mine.x"), driver.ErrInvalid, `key "mine.x" is reserved for the mine backend (keys starting with "mine.")`},
		{"meta key", driver.CheckMetaKey("mine", "mine.", "engine.x"), nil, ""},
		{"link of a malformed type", link(driver.Edge{From: 7, To: 8, Type: "Likes It"}), driver.ErrInvalid, "link 7→8 (Likes It): invalid input: malformed edge type"},
		{"link to a missing memory", link(driver.Edge{From: 7, To: 8, Type: driver.EdgeRelatesTo}), driver.ErrNotFound, "link 7→8 (relates_to): memory 8: "},
		{"link", link(driver.Edge{From: 7, To: 7, Type: driver.EdgeSupports}), nil, ""},
		{"search, no query", driver.CheckSearch(context.Background(), nil, 10), driver.ErrInvalid, "keyword search: no query"},
		{"search, limit 0", driver.CheckSearch(context.Background(), &query.Term{Text: "x"}, 0), driver.ErrInvalid, "keyword search: limit 0 is not positive"},
		{"search, canceled", driver.CheckSearch(canceled, &query.Term{Text: "x"}, 10), context.Canceled, "keyword search: "},
		{"search", driver.CheckSearch(context.Background(), &query.Term{Text: "x"}, 10), nil, ""},
	} {
		if c.want == nil {
			if c.err != nil {
				t.Errorf("%s: %v, want nil", c.name, c.err)
			}
			continue
		}
		if !errors.Is(c.err, c.want) || !strings.Contains(c.err.Error(), c.text) {
			t.Errorf("%s: %v, want %v saying %q", c.name, c.err, c.want, c.text)
		}
	}
}

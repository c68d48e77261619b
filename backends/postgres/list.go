package postgres

import (
	"fmt"

	"github.com/memos-go/memos/backends/internal/ranked"
	"github.com/memos-go/memos/backends/internal/sqlrow"
	"github.com/memos-go/memos/core/driver"
)

// listCreated is created_at as memories_list and memories_list_sig order
// it: bytewise, the zero time (NULL) as "", the earliest.
const listCreated = `coalesce(created_at, '') COLLATE "C"`

// List calls fn with the current version of every memory of opts, in its
// list order (see driver.ListReader), a page at a time, each page seeking
// past the last memory of the one before (ranked.ListPages). PostgreSQL
// does not merge ordered scans of a UNION ALL, so each page reads the first
// memories of each (namespace, status) in its range through memories_list
// or memories_list_sig, as many as the page holds, and sorts those few.
func (t *readTx) List(opts driver.ListOptions, fn func(*driver.Memory) error) error {
	namespaces, statuses, err := ranked.ListGroups(opts)
	if err != nil || len(namespaces) == 0 {
		return err
	}
	qs := map[int]string{}
	return ranked.ListPages(opts.Order, opts.After, func(i int, r ranked.ListRange, k *driver.ListKey, limit int) ([]*driver.Memory, error) {
		if qs[i] == "" {
			qs[i] = listQuery(opts.Order, r)
		}
		args := []any{namespaces, sqlrow.Strings(statuses)}
		if k != nil {
			created, err := sqlrow.EncodeTime("created_at", k.CreatedAt)
			if err != nil {
				return nil, err
			}
			args = append(args, r.Args(*k, created)...)
		}
		page, err := sqlrow.Collect(t, qs[i], append(args, limit), sqlrow.ScanMemory)
		if err != nil {
			return nil, t.fail("list memories", err)
		}
		return page, nil
	}, fn)
}

// listQuery returns the query of a page of List in order o, in the range
// r: $1 and $2 are the groups' namespaces and statuses, then r's values
// (ranked.ListRange.Args), then how many to read. Each group's part seeks
// to r's start in memories_list or memories_list_sig.
func listQuery(o driver.ListOrder, r ranked.ListRange) string {
	order := listCreated + ` DESC, id DESC`
	if o == driver.ListSignificant {
		order = `significance DESC, ` + order
	}
	n := 3
	where := r.Where(func(c ranked.Column) string {
		if c == ranked.Created {
			return listCreated
		}
		return c.Name()
	}, func() string {
		n++
		return fmt.Sprintf("$%d", n-1)
	})
	return fmt.Sprintf(`SELECT r.* FROM unnest($1::text[], $2::text[]) AS g (ns, st)
		CROSS JOIN LATERAL (SELECT `+memoryCols+`, last_accessed_at, access_count FROM memories
			WHERE namespace = g.ns AND status = g.st%s
			ORDER BY `+order+` LIMIT $%d) AS r
		ORDER BY `+order+` LIMIT $%d`, where, n, n)
}

var _ driver.ListReader = (*readTx)(nil)

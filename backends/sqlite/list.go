package sqlite

import (
	"fmt"
	"slices"
	"strings"

	"github.com/memos-go/memos/backends/internal/ranked"
	"github.com/memos-go/memos/backends/internal/sqlrow"
	"github.com/memos-go/memos/core/driver"
)

// List calls fn with the current version of every memory of opts, in its
// list order (see driver.ListReader). Each (namespace, status) is read in
// order through memories_list or memories_list_sig and SQLite merges them
// (a compound SELECT ordered by the index's columns), a page at a time,
// each page seeking past the last memory of the one before
// (ranked.ListPages). Memories whose created_at is in a format that does
// not sort as its time (written with plain SQL, normally none) are read
// whole through memories_created_other and merged in.
func (t *readTx) List(opts driver.ListOptions, fn func(*driver.Memory) error) error {
	namespaces, statuses, err := ranked.ListGroups(opts)
	if err != nil || len(namespaces) == 0 {
		return err
	}
	others, err := t.listOthers(opts, namespaces, statuses)
	if err != nil {
		return err
	}
	merge := func(m *driver.Memory) error {
		for len(others) > 0 && opts.Order.Compare(driver.KeyOf(others[0]), driver.KeyOf(m)) < 0 {
			if err := fn(others[0]); err != nil {
				return err
			}
			others = others[1:]
		}
		return fn(m)
	}
	qs := map[int]string{}
	err = ranked.ListPages(opts.Order, opts.After, func(i int, r ranked.ListRange, k *driver.ListKey, limit int) ([]*driver.Memory, error) {
		if qs[i] == "" {
			qs[i] = listQuery(opts.Order, len(namespaces), r)
		}
		args, err := listArgs(namespaces, statuses, r, k, limit)
		if err != nil {
			return nil, err
		}
		page, err := t.scanPage(qs[i], args)
		if err != nil {
			return nil, t.fail("list memories", err)
		}
		return page, nil
	}, merge)
	if err != nil {
		return err
	}
	for _, m := range others {
		if err := fn(m); err != nil {
			return err
		}
	}
	return nil
}

// listOrder is the ORDER BY of each list order, the order of its index
// (after namespace and status).
var listOrder = [...]string{driver.ListRecent: "created_at DESC, id DESC", driver.ListSignificant: "significance DESC, created_at DESC, id DESC"}

// listQuery returns the query of a page of List in order o over n groups,
// in the range r. Each group's SELECT seeks to r's start in memories_list
// or memories_list_sig.
func listQuery(o driver.ListOrder, n int, r ranked.ListRange) string {
	var q strings.Builder
	where := r.Where(ranked.Column.Name, func() string { return "?" })
	for i := range n {
		if i > 0 {
			q.WriteString(" UNION ALL ")
		}
		q.WriteString(`SELECT ` + memoryCols + `, last_accessed_at, access_count FROM memories
			WHERE namespace = ? AND status = ? AND ` + sortedCreated + where)
	}
	q.WriteString(" ORDER BY " + listOrder[o] + " LIMIT ?")
	return q.String()
}

// listArgs returns the arguments of a listQuery in the range r relative to k.
func listArgs(namespaces []string, statuses []driver.Status, r ranked.ListRange, k *driver.ListKey, limit int) ([]any, error) {
	var key []any
	if k != nil {
		created, err := sqlrow.EncodeTime("created_at", k.CreatedAt)
		if err != nil {
			return nil, err
		}
		key = r.Args(*k, created)
	}
	var args []any
	for i := range namespaces {
		args = append(append(args, namespaces[i], string(statuses[i])), key...)
	}
	return append(args, limit), nil
}

// qListOthers reads the memories of a group whose created_at does not sort
// as its time, through memories_created_other.
var qListOthers = `SELECT ` + memoryCols + `, last_accessed_at, access_count FROM memories
	WHERE namespace = ? AND status = ? AND ` + otherCreated

// listOthers returns the memories of the groups whose created_at does not
// sort as its time and that come after opts.After, in list order.
func (t *readTx) listOthers(opts driver.ListOptions, namespaces []string, statuses []driver.Status) ([]*driver.Memory, error) {
	var out []*driver.Memory
	for i := range namespaces {
		page, err := t.scanPage(qListOthers, []any{namespaces[i], string(statuses[i])})
		if err != nil {
			return nil, t.fail(fmt.Sprintf("list memories of namespace %q", namespaces[i]), err)
		}
		for _, m := range page {
			if opts.After == nil || opts.Order.Compare(*opts.After, driver.KeyOf(m)) < 0 {
				out = append(out, m)
			}
		}
	}
	slices.SortFunc(out, func(a, b *driver.Memory) int { return opts.Order.Compare(driver.KeyOf(a), driver.KeyOf(b)) })
	return out, nil
}

var _ driver.ListReader = (*readTx)(nil)

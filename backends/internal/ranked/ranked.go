// Package ranked holds what the backends share to implement
// driver.RankReader: the groups of memories a filter names, each of which
// a backend keeps in rank order (driver.CompareRank) in one index and
// merges with the others, and the keyset paging of a rank-ordered SQL
// query; and the same for driver.ListReader (list.go).
package ranked

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/memos-go/memos/core/driver"
)

// Group is one (namespace, status, type) of a filter: a backend's rank
// index lists each group's memories in rank order.
type Group struct {
	Namespace string
	Status    driver.Status
	Type      driver.Type
}

// Groups returns the groups f names, without duplicates, or an error when
// f leaves namespaces, statuses or types open (nil), which RankReader
// does not allow.
func Groups(f driver.Filter) ([]Group, error) {
	switch {
	case f.Namespaces == nil:
		return nil, driver.Invalidf("ranked read: the filter names no namespaces")
	case f.Statuses == nil:
		return nil, driver.Invalidf("ranked read: the filter names no statuses")
	case f.Types == nil:
		return nil, driver.Invalidf("ranked read: the filter names no types")
	}
	var gs []Group
	for _, ns := range f.Namespaces {
		for _, st := range f.Statuses {
			for _, ty := range f.Types {
				if g := (Group{ns, st, ty}); !slices.Contains(gs, g) {
					gs = append(gs, g)
				}
			}
		}
	}
	return gs, nil
}

// First and Max bound the pages Walk asks for: the first page holds
// First memories, each next one twice as many as the one before, up to Max.
// Growing pages keep a read that stops early cheap.
const (
	First = 64
	Max   = 4096
)

// Key is a memory's place in rank order as a backend's rank index holds it:
// the index's columns after the group's. LastAccessed is the text stored
// (nil for NULL: never accessed), not the decoded time, so that a page
// starts exactly after the row the one before ended at whatever the form of
// that text (rows written with plain SQL may hold other formats, or "").
type Key struct {
	Significance int
	AccessCount  int64
	LastAccessed *string
	ID           int64
}

// Row is a memory a page returns and its stored last access (see Key).
type Row struct {
	Memory       *driver.Memory
	LastAccessed *string
}

func (r Row) key() Key {
	return Key{r.Memory.Significance, r.Memory.AccessCount, r.LastAccessed, r.Memory.ID}
}

// WithKey returns s (a row of a rank-ordered query: *sql.Rows, pgx.Rows)
// with a Scan that reads one column more than it is given, the stored
// last_accessed_at of Row, into accessed: the query lists it last.
func WithKey(s Scanner, accessed any) Scanner { return withKey{s, accessed} }

// Scanner is a row that scans its columns into dest.
type Scanner interface{ Scan(dest ...any) error }

type withKey struct {
	Scanner
	accessed any
}

func (w withKey) Scan(dest ...any) error { return w.Scanner.Scan(append(dest, w.accessed)...) }

// Column is a column of the rank order: significance, access count and
// last access descending (never accessed, NULL, last), then id ascending.
type Column int

const (
	Significance Column = iota
	AccessCount
	LastAccessed
	ID
	Created // created_at: of the list orders (driver.ListOrder), not the rank order
)

// Name is c's column in the backends' memories tables.
func (c Column) Name() string {
	return [...]string{Significance: "significance", AccessCount: "access_count", LastAccessed: "last_accessed_at", ID: "id", Created: "created_at"}[c]
}

// Op is how a Cond compares a column with a Key's value.
type Op int

const (
	Eq      Op = iota // column = the key's value
	Less              // column < the key's value
	Greater           // column > the key's value
	Null              // column IS NULL (no value)
)

// Cond is one condition of a Range.
type Cond struct {
	Column Column
	Op     Op
}

// Range is a stretch of the rank order relative to a key, which an index
// in rank order lists contiguously: every condition but the last fixes a
// column to the key's value and the last bounds the next column (or asks
// for NULL), so a backend seeks to the stretch's start and reads on. The
// order is mixed (three columns descending, id ascending), which a single
// row comparison cannot bound; After splits what follows a key into
// such stretches instead.
type Range int

const (
	All             Range = iota // every memory: the first page
	SameAccessAfter              // significance, access count and last access (not NULL) the key's; a greater id
	NeverAfter                   // significance and access count the key's, never accessed (like the key); a greater id
	OlderAccess                  // significance and access count the key's, last access before the key's
	NeverAccessed                // significance and access count the key's, never accessed (the key was)
	FewerAccesses                // the key's significance, fewer accesses
	LessSignificant              // less significance
	NRanges                      // the number of ranges
)

var conds = [NRanges][]Cond{
	All:             nil,
	SameAccessAfter: {{Significance, Eq}, {AccessCount, Eq}, {LastAccessed, Eq}, {ID, Greater}},
	NeverAfter:      {{Significance, Eq}, {AccessCount, Eq}, {LastAccessed, Null}, {ID, Greater}},
	OlderAccess:     {{Significance, Eq}, {AccessCount, Eq}, {LastAccessed, Less}},
	NeverAccessed:   {{Significance, Eq}, {AccessCount, Eq}, {LastAccessed, Null}},
	FewerAccesses:   {{Significance, Eq}, {AccessCount, Less}},
	LessSignificant: {{Significance, Less}},
}

// Conds returns r's conditions; All has none.
func (r Range) Conds() []Cond { return conds[r] }

// Where renders r's conditions as SQL, each after " AND ": col names a
// column as the backend's index holds it (so that the index serves the
// comparison), param returns the placeholder of the next value, which
// Args lists in the same order.
func (r Range) Where(col func(Column) string, param func() string) string {
	return where(conds[r], col, param)
}

func where(conds []Cond, col func(Column) string, param func() string) string {
	var b strings.Builder
	for _, c := range conds {
		b.WriteString(" AND " + col(c.Column))
		switch c.Op {
		case Eq:
			b.WriteString(" = " + param())
		case Less:
			b.WriteString(" < " + param())
		case Greater:
			b.WriteString(" > " + param())
		case Null:
			b.WriteString(" IS NULL")
		}
	}
	return b.String()
}

// Args returns the values of r's conditions for k, in Where's order.
func (r Range) Args(k Key) []any {
	var args []any
	for _, c := range conds[r] {
		if c.Op == Null {
			continue
		}
		switch c.Column {
		case Significance:
			args = append(args, k.Significance)
		case AccessCount:
			args = append(args, k.AccessCount)
		case LastAccessed:
			args = append(args, *k.LastAccessed)
		case ID:
			args = append(args, k.ID)
		}
	}
	return args
}

// After returns the ranges that, read one after the other, list every
// memory after k in rank order, each exactly once.
func After(k Key) []Range {
	if k.LastAccessed == nil {
		return []Range{NeverAfter, FewerAccesses, LessSignificant}
	}
	return []Range{SameAccessAfter, OlderAccess, NeverAccessed, FewerAccesses, LessSignificant}
}

// Walk calls fn with the memories of a rank-ordered read, page after page,
// until they run out or fn returns an error (which Walk returns). page(r,
// k, limit) returns, in rank order, at most limit rows of the range r
// relative to k (the zero Key for All). Each page starts after the last
// row of the one before (keyset paging): it reads the ranges After that
// row, in turn, until it is full, so every row is read once, however deep
// the read goes (an OFFSET would re-read the rows before it).
func Walk(page func(r Range, k Key, limit int) ([]Row, error), fn func(*driver.Memory) error) error {
	var k Key
	ranges := []Range{All}
	for n := First; ; n = min(2*n, Max) {
		got := 0
		var last Row
		for _, r := range ranges {
			rows, err := page(r, k, n-got)
			if err != nil {
				if r == All {
					return fmt.Errorf("ranked read: %w", err)
				}
				return fmt.Errorf("ranked read after memory %d: %w", k.ID, err)
			}
			for _, row := range rows {
				if err := fn(row.Memory); err != nil {
					return err
				}
			}
			if len(rows) > 0 {
				last = rows[len(rows)-1]
			}
			if got += len(rows); got >= n {
				break
			}
		}
		if got < n {
			return nil
		}
		k, ranges = last.key(), After(last.key())
	}
}

// UpdatedPages calls fn with every memory a keyset-paged query returns, in
// (updated_at, id) order: page(from, fromID) reads at most size memories
// whose key comes after (from, fromID), and key encodes a memory's
// updated_at as the query compares it. The first page starts after
// (from, MaxInt64), past every memory updated at from itself; the walk
// ends with a page shorter than size. The errors of page and key are
// returned through fail, fn's as they are.
func UpdatedPages(size int, from string, page func(from string, fromID int64) ([]*driver.Memory, error),
	key func(time.Time) (string, error), fail func(error) error, fn func(*driver.Memory) error) error {
	fromID := int64(math.MaxInt64)
	for {
		p, err := page(from, fromID)
		if err != nil {
			return fail(err)
		}
		for _, m := range p {
			if err := fn(m); err != nil {
				return err
			}
		}
		if len(p) < size {
			return nil
		}
		last := p[len(p)-1]
		if from, err = key(last.UpdatedAt); err != nil {
			return fail(fmt.Errorf("memory %d: updated_at %v: %w", last.ID, last.UpdatedAt, err))
		}
		fromID = last.ID
	}
}

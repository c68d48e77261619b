package sqlite

import (
	"strconv"

	"github.com/memos-go/memos/backends/internal/sqlrow"
)

// The row code (time, vector and JSON columns, scanning a memory) is the
// postgres backend's too: backends/internal/sqlrow. Columns take MemU's
// forms where a value is empty (sqlrow.MemoryArgs with memu set), so that a
// MemU memory.db is a store.
const (
	timeLayout = sqlrow.TimeLayout
	memoryCols = sqlrow.MemoryCols
)

// jsonIDs renders the ids of xs as a JSON array, for statements that take
// a list of ids through json_each.
func jsonIDs[T any](xs []T, id func(T) int64) string {
	b := make([]byte, 0, 12*len(xs)+2)
	b = append(b, '[')
	for i, x := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, id(x), 10)
	}
	return string(append(b, ']'))
}

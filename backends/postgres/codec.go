package postgres

import "github.com/memos-go/memos/backends/internal/sqlrow"

// The row code (time, vector and JSON columns, scanning a memory) is the
// sqlite backend's too: backends/internal/sqlrow, with every empty value
// NULL (sqlrow.MemoryArgs without memu). Times are stored as text in
// sqlrow.TimeLayout rather than timestamptz, which keeps microseconds only:
// the contract is that a time comes back as the same instant to the
// nanosecond, and the fixed width keeps the text sortable, which Touch
// relies on. JSON is text rather than jsonb, which reorders keys and
// normalises numbers: the store keeps what it got.
const memoryCols = sqlrow.MemoryCols

package sqlite

// The engine keeps vectors in an index that lives in the core; importing the
// standard ones here registers them wherever a backend is used.
import (
	_ "github.com/memos-go/memos/core/vector"
	_ "github.com/memos-go/memos/core/vector/hnsw"
)

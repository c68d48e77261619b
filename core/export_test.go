package core

// FlushAccesses writes e's pending access statistics now, as the background
// writer would.
func FlushAccesses(e *Engine) { e.flushAccesses() }

// SetHNSWMinRecall sets the recall an "auto" graph must reach to replace
// the exact index.
func SetHNSWMinRecall(e *Engine, r float64) { e.vec.SetMinRecall(r) }

// WaitAutoBuild waits for the latest background HNSW build of e to end and
// returns the store size at which "auto" builds next.
func WaitAutoBuild(e *Engine) int { return e.vec.WaitBuild() }

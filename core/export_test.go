package core

// FlushAccesses writes e's pending access statistics now, as the background
// writer would.
func FlushAccesses(e *Engine) { e.flushAccesses() }

// SetHNSWMinRecall sets the recall an "auto" graph must reach to replace
// the exact index.
func SetHNSWMinRecall(e *Engine, r float64) {
	e.auto.mu.Lock()
	e.auto.minRecall = r
	e.auto.mu.Unlock()
}

// WaitAutoBuild waits for the latest background HNSW build of e to end and
// returns the store size at which "auto" builds next.
func WaitAutoBuild(e *Engine) int {
	e.auto.mu.Lock()
	done := e.auto.done
	e.auto.mu.Unlock()
	if done != nil {
		<-done
	}
	e.auto.mu.Lock()
	defer e.auto.mu.Unlock()
	return e.auto.threshold
}

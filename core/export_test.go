package core

// FlushAccesses writes e's pending access statistics now, as the background
// writer would.
func FlushAccesses(e *Engine) { e.flushAccesses() }

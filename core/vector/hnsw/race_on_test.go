//go:build race

package hnsw

// raceEnabled is true when the tests run under the race detector, which
// slows graph building about tenfold; the recall tests then use fewer
// vectors (see recallSize).
const raceEnabled = true

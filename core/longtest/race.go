//go:build race

package longtest

// Race reports whether the tests were built with the race detector.
const Race = true

//go:build !race

package testbin

// Race reports whether this program was built with the race detector.
const Race = false

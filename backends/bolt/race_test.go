//go:build race

package bolt

// raceEnabled is set when the race detector is on; slow randomized tests
// then try fewer cases.
const raceEnabled = true

//go:build race

package sqlite

// raceEnabled is set when the race detector is on; slow randomized tests
// then try fewer cases (CI runs them in full without it).
const raceEnabled = true

package longtest

import (
	"flag"
	"testing"
)

func TestEnabled(t *testing.T) {
	for v, want := range map[string]bool{"": false, "0": false, "false": false, "1": true, "true": true, "yes": true} {
		t.Setenv(Env, v)
		if got := Enabled(); got != want {
			t.Errorf("%s=%q: Enabled() = %v, want %v", Env, v, got, want)
		}
		if got := Pick(1, 2); got != map[bool]int{false: 1, true: 2}[want] {
			t.Errorf("%s=%q: Pick(1, 2) = %d", Env, v, got)
		}
	}
}

func TestPickFull(t *testing.T) {
	for v, long := range map[string]bool{"": false, "1": true} {
		t.Setenv(Env, v)
		// Full size only in the long set, and never under -race.
		want := long && !Race
		if got := Full(); got != want {
			t.Errorf("%s=%q, race %v: Full() = %v, want %v", Env, v, Race, got, want)
		}
		if got := PickFull(1, 2); got != map[bool]int{false: 1, true: 2}[want] {
			t.Errorf("%s=%q, race %v: PickFull(1, 2) = %d", Env, v, Race, got)
		}
	}
}

// rapidChecks stands for the flag pgregory.net/rapid registers; this
// package's tests do not link rapid.
var rapidChecks = flag.Int("rapid.checks", 100, "rapid: number of checks to perform")

func TestQuickRapidChecks(t *testing.T) {
	long := 100 // the long set keeps rapid's count, without -race
	if Race {
		long = 7
	}
	for _, c := range []struct {
		long, rapidEnv string
		want           int
	}{
		{"", "", 7},     // the quick set lowers it
		{"1", "", long}, // and the long set under -race
		{"", "50", 100}, // an explicit RAPID_CHECKS keeps rapid's count
	} {
		*rapidChecks = 100
		t.Setenv(Env, c.long)
		t.Setenv("RAPID_CHECKS", c.rapidEnv)
		QuickRapidChecks(7)
		if *rapidChecks != c.want {
			t.Errorf("%s=%q RAPID_CHECKS=%q: checks %d, want %d", Env, c.long, c.rapidEnv, *rapidChecks, c.want)
		}
	}
}

func TestQuickRapidChecksKeepsTheFlag(t *testing.T) {
	t.Setenv(Env, "")
	t.Setenv("RAPID_CHECKS", "")
	if err := flag.Set("rapid.checks", "30"); err != nil { // as -rapid.checks=30 would
		t.Fatal(err)
	}
	QuickRapidChecks(7)
	if *rapidChecks != 30 {
		t.Fatalf("checks %d, want the 30 given", *rapidChecks)
	}
}

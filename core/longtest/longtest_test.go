package longtest

import "testing"

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

package query

import "testing"

func TestAsksCount(t *testing.T) {
	for s, want := range map[string]bool{
		"How many weddings have I attended this year?":         true,
		"HOW MUCH did I spend on the trip":                     true,
		"What is the total number of online courses I did?":    true,
		"How many hours have I spent playing games altogether": true,
		"we spent it altogether":                               true,
		"How did Caroline get to the support group?":           false,
		"When did Melanie paint a sunrise?":                    false,
		"how":                                                  false,
		"many weddings":                                        false,
		"totally fine":                                         false,
		"":                                                     false,
	} {
		if got := AsksCount(s); got != want {
			t.Errorf("AsksCount(%q) = %v, want %v", s, got, want)
		}
	}
}

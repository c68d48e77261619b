package vectortest

import (
	"reflect"
	"testing"

	"github.com/memos-go/memos/core/driver"
)

// TestEveryMethodHasCases fails when driver.VectorIndex has a method that no
// conformance case exercises, or when covers names a case that Run lacks.
func TestEveryMethodHasCases(t *testing.T) {
	it := reflect.TypeFor[driver.VectorIndex]()
	for i := range it.NumMethod() {
		if m := it.Method(i).Name; len(covers[m]) == 0 {
			t.Errorf("driver.VectorIndex.%s has no conformance case; add one to Run and to covers", m)
		}
	}
	if len(covers) != it.NumMethod() {
		t.Errorf("covers lists %d methods, driver.VectorIndex has %d", len(covers), it.NumMethod())
	}
	names := map[string]bool{}
	for _, c := range (&kit{}).cases() {
		names[c.name] = true
	}
	for m, cs := range covers {
		for _, c := range cs {
			if !names[c] {
				t.Errorf("covers[%q] names case %q, which Run does not have", m, c)
			}
		}
	}
}

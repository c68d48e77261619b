package api

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/memos-go/memos/core"
)

// TestErrorKindsListed: every kind core gives an error is in the error
// body's schema, so that the generated clients raise its own error class.
func TestErrorKindsListed(t *testing.T) {
	kind, ok := Schema(reflect.TypeFor[ErrorBody]()).Properties.Get("error")
	if !ok {
		t.Fatal("the error body has no error property")
	}
	k, ok := kind.Properties.Get("kind")
	if !ok {
		t.Fatal("the error detail has no kind property")
	}
	var enum []string
	for _, v := range k.Enum {
		enum = append(enum, v.(string))
	}
	for _, err := range []error{core.ErrNotFound, core.ErrInvalid, core.ErrModelMismatch, core.ErrDimensionMismatch,
		core.ErrConflict, core.ErrUnknownName, core.ErrClosed, core.ErrUnavailable, core.ErrForbidden,
		context.Canceled, context.DeadlineExceeded, errors.New("anything else")} {
		if name := core.KindOf(err).Name; !slices.Contains(enum, name) {
			t.Errorf("error kind %q (of %v) is not in the error body's kind enum %v", name, err, enum)
		}
	}
}

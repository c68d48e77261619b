package driver

import (
	"context"
	"errors"
	"fmt"
)

// Sentinel errors. Every error returned by the engine and by backends wraps at
// most one of these, so callers test with errors.Is. Front-ends map them to
// HTTP status codes, MCP errors and exit codes in one table (see KindOf).
var (
	// ErrNotFound: the memory, version or edge does not exist (or was forgotten).
	ErrNotFound = errors.New("not found")
	// ErrInvalid: the input was rejected; the message says which field and why.
	ErrInvalid = errors.New("invalid input")
	// ErrDimensionMismatch: an embedding's dimension differs from the store's
	// or the index's.
	ErrDimensionMismatch = errors.New("embedding dimension mismatch")
	// ErrModelMismatch: the store was embedded with another model (of the
	// same or another dimension). It also matches ErrDimensionMismatch, so
	// code written against that keeps working.
	ErrModelMismatch error = &subError{"embedding model mismatch", ErrDimensionMismatch}
	// ErrClosed: the engine or backend was used after Close.
	ErrClosed = errors.New("closed")
	// ErrConflict: a concurrent change made the operation impossible (e.g. a
	// version was written by someone else in between).
	ErrConflict = errors.New("conflict")
	// ErrUnknownName: no backend or embedder is registered under the name.
	ErrUnknownName = errors.New("unknown name")
	// ErrUnavailable: an external dependency (plugin process, embedding server)
	// did not answer; retrying later may succeed.
	ErrUnavailable = errors.New("unavailable")
	// ErrForbidden: the caller may not do this: change a memory it may only
	// read, or reach beyond the namespaces it is limited to.
	ErrForbidden = errors.New("forbidden")
)

// subError is a sentinel that also matches a broader one.
type subError struct {
	msg    string
	parent error
}

func (e *subError) Error() string        { return e.msg }
func (e *subError) Is(target error) bool { return target == e.parent }

// Error is the error type returned by the engine: the operation, the memory id
// (0 when none applies) and the underlying error, which wraps a sentinel.
type Error struct {
	Op  string // e.g. "get", "remember", "search"
	ID  int64  // memory id, if any
	Err error
}

func (e *Error) Error() string {
	if e.ID != 0 {
		return fmt.Sprintf("%s %d: %v", e.Op, e.ID, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Op, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// invalidf returns an ErrInvalid error with a message saying what was wrong.
func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// Invalidf is invalidf for backends and front-ends: an ErrInvalid with a message.
func Invalidf(format string, args ...any) error { return invalidf(format, args...) }

// Kind describes how front-ends report one class of error.
type Kind struct {
	Name     string // stable machine name, e.g. "not_found"
	HTTP     int    // HTTP status code
	ExitCode int    // CLI exit code
}

// kinds is the one table that maps errors to HTTP statuses and exit codes.
// Order matters: the first sentinel that matches wins.
var kinds = []struct {
	err  error
	kind Kind
}{
	{ErrNotFound, Kind{"not_found", 404, 3}},
	{ErrInvalid, Kind{"invalid", 400, 2}},
	{ErrModelMismatch, Kind{"model_mismatch", 409, 4}},
	{ErrDimensionMismatch, Kind{"dimension_mismatch", 409, 4}},
	{ErrConflict, Kind{"conflict", 409, 5}},
	{ErrUnknownName, Kind{"unknown_name", 400, 2}},
	{ErrClosed, Kind{"closed", 503, 6}},
	{ErrUnavailable, Kind{"unavailable", 503, 6}},
	{ErrForbidden, Kind{"forbidden", 403, 2}},
	{context.Canceled, Kind{"canceled", 499, 130}},
	{context.DeadlineExceeded, Kind{"deadline_exceeded", 504, 7}},
}

var internalKind = Kind{"internal", 500, 1}

// KindOf classifies err for front-ends. A nil error has the zero Kind.
func KindOf(err error) Kind {
	if err == nil {
		return Kind{}
	}
	for _, k := range kinds {
		if errors.Is(err, k.err) {
			return k.kind
		}
	}
	return internalKind
}

package shim

import (
	"context"
	"errors"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/memos-go/memos/core/driver"
)

// errorDomain marks ErrorInfo details written by memos plugins.
const errorDomain = "memos"

// sentinels maps memos' error classes to gRPC codes. Reading it left to
// right gives the plugin side, right to left the host side; the first match
// wins in both directions, so each code maps back to its first sentinel.
var sentinels = []struct {
	err  error
	code codes.Code
}{
	{driver.ErrInvalid, codes.InvalidArgument},
	{driver.ErrUnavailable, codes.Unavailable},
	{driver.ErrNotFound, codes.NotFound},
	{driver.ErrUnknownName, codes.NotFound},
	{driver.ErrDimensionMismatch, codes.FailedPrecondition},
	{driver.ErrClosed, codes.FailedPrecondition},
	{driver.ErrConflict, codes.Aborted},
	{context.Canceled, codes.Canceled},
	{context.DeadlineExceeded, codes.DeadlineExceeded},
}

// ToStatus converts an embedder's error into a gRPC status error: the code
// from the table above (Unknown when no sentinel matches), the error's text
// as the message, and an ErrorInfo detail naming memos' error kind so that
// the host restores the exact sentinel.
func ToStatus(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok && !isCore(err) {
		return err // already a status (e.g. from a nested gRPC call)
	}
	code := codes.Unknown
	for _, s := range sentinels {
		if errors.Is(err, s.err) {
			code = s.code
			break
		}
	}
	st := status.New(code, err.Error())
	if d, derr := st.WithDetails(&errdetails.ErrorInfo{Domain: errorDomain, Reason: driver.KindOf(err).Name}); derr == nil {
		st = d
	}
	return st.Err()
}

func isCore(err error) bool {
	for _, s := range sentinels {
		if errors.Is(err, s.err) {
			return true
		}
	}
	return false
}

// Error is an error reported through the protocol.
type Error struct {
	// Msg is the plugin's error text, or gRPC's for a transport failure.
	Msg string
	// Code is the gRPC status code.
	Code codes.Code
	// Kind is the sentinel (or context error) the error wraps; nil when
	// none applies.
	Kind error
	// FromPlugin is true when the plugin's code produced the error (the
	// status carries memos' ErrorInfo), false for transport failures and
	// plugins that send bare codes.
	FromPlugin bool
}

func (e *Error) Error() string { return e.Msg }

// Unwrap returns the sentinel, so errors.Is(err, driver.ErrInvalid) works.
func (e *Error) Unwrap() error { return e.Kind }

// FromStatus converts a gRPC error back into an *Error wrapping the
// matching sentinel: by the ErrorInfo reason when the plugin sent one, by
// the status code otherwise. A failure to reach the plugin at all
// (Unavailable without ErrorInfo) wraps driver.ErrUnavailable.
func FromStatus(err error) error {
	if err == nil {
		return nil
	}
	st, ok := status.FromError(err)
	if !ok {
		return err
	}
	e := &Error{Msg: st.Message(), Code: st.Code()}
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.GetDomain() == errorDomain {
			e.FromPlugin = true
			for _, s := range sentinels {
				if driver.KindOf(s.err).Name == info.GetReason() {
					e.Kind = s.err
					break
				}
			}
		}
	}
	if e.Kind == nil && !e.FromPlugin {
		for _, s := range sentinels {
			if s.code == st.Code() {
				e.Kind = s.err
				break
			}
		}
	}
	return e
}

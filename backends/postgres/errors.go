package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/memos-go/memos/backends/internal/sqlrow"
	"github.com/memos-go/memos/core/driver"
)

// dbError turns an error from pgx into one that says what memos was doing
// and, where one applies, wraps a driver sentinel: a server that cannot be
// reached, is shutting down or dropped the connection is
// driver.ErrUnavailable (retrying later may succeed; the pool reconnects on
// its own). Context errors pass through, wrapped with op.
func dbError(ctx context.Context, op string, err error) error {
	if ok, err := sqlrow.CommonError(ctx, op, err, errors.Is(err, pgx.ErrTxClosed)); ok {
		return err
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == "40001", pe.Code == "40P01":
			return fmt.Errorf("%s: %w (%w)", op, driver.ErrConflict, err)
		case pe.Code[:2] == "08", pe.Code == "57P01", pe.Code == "57P02", pe.Code == "57P03", pe.Code == "53300":
			return fmt.Errorf("%s: the database is not available (%s); retry shortly: %w", op, pe.Message, driver.ErrUnavailable)
		case pe.Code == "53100":
			return fmt.Errorf("%s: the database server's disk is full (%s); free some space and retry", op, pe.Message)
		case pe.Code == "42501":
			return fmt.Errorf("%s: the database role lacks a privilege (%s); grant it, or use another role in the dsn", op, pe.Message)
		}
		return fmt.Errorf("%s: %w", op, err)
	}
	if isConnError(err) {
		return fmt.Errorf("%s: the database is not reachable (%v); retry shortly: %w", op, err, driver.ErrUnavailable)
	}
	return fmt.Errorf("%s: %w", op, err)
}

// isConnError reports a failure to reach the server or a connection lost
// mid-operation.
func isConnError(err error) bool {
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.As(err, &ne) || pgconn.SafeToRetry(err) ||
		errors.Is(err, pgconn.ErrConnClosed) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, io.EOF) || strings.Contains(err.Error(), "conn closed")
}

// retryable reports a serialization failure or deadlock, after which the
// whole transaction may simply run again.
func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
}

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	msqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/memos-go/memos/backends/internal/sqlrow"
	"github.com/memos-go/memos/core/driver"
)

// dbError turns an error from the driver into one that says what memos was
// doing and, where one applies, wraps a core sentinel. Context errors pass
// through (wrapped with op), also when the driver reports them as an
// interrupted statement.
func dbError(ctx context.Context, op string, err error) error {
	if ok, err := sqlrow.CommonError(ctx, op, err, errors.Is(err, sql.ErrTxDone)); ok {
		return err
	}
	if errors.Is(err, sql.ErrConnDone) {
		return fmt.Errorf("%s: %w", op, driver.ErrClosed)
	}
	var se *msqlite.Error
	if !errors.As(err, &se) {
		return fmt.Errorf("%s: %w", op, err)
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return fmt.Errorf("%s: the store stayed locked by another writer for longer than busy_timeout; retry, or raise busy_timeout (%v): %w", op, err, driver.ErrUnavailable)
	case sqlite3.SQLITE_NOTADB:
		return fmt.Errorf("%s: the file is not an SQLite database (%v); check the path: %w", op, err, driver.ErrInvalid)
	case sqlite3.SQLITE_CORRUPT:
		return fmt.Errorf("%s: the store file is damaged (%v); restore it from a backup, or inspect it with sqlite3's PRAGMA integrity_check", op, err)
	case sqlite3.SQLITE_FULL:
		return fmt.Errorf("%s: the disk is full (%v); free some space and retry", op, err)
	case sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM, sqlite3.SQLITE_CANTOPEN:
		return fmt.Errorf("%s: the store file or its directory cannot be written (%v); check permissions", op, err)
	}
	return fmt.Errorf("%s: %w", op, err)
}

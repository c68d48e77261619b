package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/jackc/pgx/v5"

	"github.com/memos-go/memos/core/driver"
)

// Blobs (driver.BlobStore) live in the table blobs (schema version 4), in
// chunks of a little less than a page (blobChunk: 7,936 bytes with
// PostgreSQL's 8 KiB pages), one row each, stored PLAIN: in the table's own
// pages, uncompressed. A sequential read of the table's pages is the
// cheapest way to get many bytes out of PostgreSQL: 1 MiB chunks, which
// TOAST stores out of line in 2 KB pieces fetched one by one through its
// index, read 6–12× slower (100 MB: 0.6–1.3 s against 0.08–0.2 s, server
// side, load average 18). Vectors do not compress anyway. A write is one
// COPY; a read fetches pages of chunks in order.
//
// A blob is written in a READ COMMITTED transaction of its own that does
// not lock the store row, so writers of memories do not wait for it; the
// writes and deletes of one blob take turns on a transaction-level
// advisory lock on its name.

var _ driver.BlobStore = (*DB)(nil)

// blobChunk returns the bytes of one row of a blob: a page less room for
// the row's header, its name and number (names are at most maxBlobName).
func blobChunk(blockSize int) int { return blockSize - 256 }

// maxBlobName bounds a blob's name, so that a row fits in a page.
const maxBlobName = 64

// maxBlobPage bounds the chunks one statement of a read returns (8 MiB):
// what a reader that stops early may leave to drain.
const maxBlobPage = 1024

// checkBlobName refuses a name that would not fit a row.
func checkBlobName(name string) error {
	if name == "" || len(name) > maxBlobName {
		return driver.Invalidf("postgres: blob name %q is empty or longer than %d bytes", name, maxBlobName)
	}
	return nil
}

// ReadBlob calls fn with a reader of blob name and its size, in a read
// transaction. The reader reads the chunks a page of rows at a time (one
// first, so that reading a header costs one, then doubling up to
// maxBlobPage), straight from the connection's buffer into the caller's.
func (d *DB) ReadBlob(ctx context.Context, name string, fn func(r io.Reader, size int64) error) error {
	if err := checkBlobName(name); err != nil {
		return err
	}
	return d.View(ctx, func(tx driver.ReadTx) error {
		t := tx.(*readTx)
		var chunks, size int64
		err := t.queryRow(`SELECT count(*), coalesce(sum(length(data)), 0)::bigint FROM blobs WHERE name = $1`,
			[]any{name}, &chunks, &size)
		if err != nil {
			return fmt.Errorf("postgres: %w", t.fail("read blob "+name, err))
		}
		if chunks == 0 {
			return fmt.Errorf("postgres: blob %s: %w", name, driver.ErrNotFound)
		}
		r := &blobReader{t: t, name: name, chunks: int(chunks), page: 1}
		defer r.close()
		return fn(r, size)
	})
}

// blobReader reads a blob's chunks in order. While a page's rows are open
// it holds the transaction's connection (t.mu).
type blobReader struct {
	t      *readTx
	name   string
	chunks int      // the blob's chunks
	next   int      // the first chunk not asked for
	page   int      // how many chunks the next page asks for
	rows   pgx.Rows // the page being read; nil between pages
	cur    []byte   // what is left of the current chunk, in rows' buffer
	err    error    // the error that ended reading
}

func (r *blobReader) Read(p []byte) (int, error) {
	for len(r.cur) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		r.advance()
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	return n, nil
}

// advance moves cur to the next chunk, opening the next page when the
// current one is read; at the end, or on an error, it sets err.
func (r *blobReader) advance() {
	op := "read blob " + r.name
	if r.rows == nil {
		if r.next >= r.chunks {
			r.err = io.EOF
			return
		}
		if err := r.t.lock(); err != nil {
			r.err = fmt.Errorf("postgres: %w", r.t.fail(op, err))
			return
		}
		rows, err := r.t.query(`SELECT data FROM blobs WHERE name = $1 AND chunk >= $2 ORDER BY chunk LIMIT $3`, r.name, r.next, r.page)
		if err != nil {
			r.t.mu.Unlock()
			r.err = fmt.Errorf("postgres: %w", r.t.fail(op, err))
			return
		}
		r.rows, r.next, r.page = rows, r.next+r.page, min(2*r.page, maxBlobPage)
	}
	if r.rows.Next() {
		// bytea's binary format is the bytes: no copy of the row.
		if f := r.rows.FieldDescriptions(); len(f) != 1 || f[0].Format != pgx.BinaryFormatCode {
			r.close()
			r.err = fmt.Errorf("postgres: %s: the server sent the chunks as text", op)
			return
		}
		r.cur = r.rows.RawValues()[0]
		return
	}
	if err := r.close(); err != nil {
		r.err = fmt.Errorf("postgres: %w", r.t.fail(op, err))
	}
}

// close ends the page being read, if any, and releases the connection.
func (r *blobReader) close() error {
	if r.rows == nil {
		return nil
	}
	r.rows.Close()
	err := r.rows.Err()
	r.rows, r.cur = nil, nil
	r.t.mu.Unlock()
	return err
}

// blobTx runs fn in a READ COMMITTED transaction that holds the lock of
// blob name, and commits when fn returns nil.
func (d *DB) blobTx(ctx context.Context, op, name string, fn func(t *readTx, ptx pgx.Tx) error) error {
	return d.guard.Run(ctx, op, func() error {
		ptx, err := d.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
		if err != nil {
			return fmt.Errorf("postgres: %w", dbError(ctx, op, err))
		}
		t := &readTx{ctx: ctx, tx: ptx}
		t.bindReads()
		defer func() {
			t.end()
			ptx.Rollback(context.Background()) // a no-op after Commit
		}()
		if _, err := ptx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, "memos-blob:"+d.schema+":"+name); err != nil {
			return fmt.Errorf("postgres: %w", dbError(ctx, op, err))
		}
		if err := fn(t, ptx); err != nil {
			return err
		}
		if err := ptx.Commit(ctx); err != nil {
			return fmt.Errorf("postgres: %w", dbError(ctx, op, err))
		}
		return nil
	})
}

// WriteBlob replaces blob name by what r yields, a chunk per row, in one
// COPY, after check. It takes the blob's lock, not the store row's.
func (d *DB) WriteBlob(ctx context.Context, name string, check func(tx driver.ReadTx) error, r io.Reader) error {
	if err := checkBlobName(name); err != nil {
		return err
	}
	op := "write blob " + name
	return d.blobTx(ctx, op, name, func(t *readTx, ptx pgx.Tx) error {
		if check != nil {
			if err := check(t); err != nil {
				return err
			}
		}
		if _, err := t.exec(`DELETE FROM blobs WHERE name = $1`, name); err != nil {
			return fmt.Errorf("postgres: %w", t.fail(op, err))
		}
		src := &chunkSource{name: name, r: r, buf: make([]byte, blobChunk(d.blockSize))}
		if _, err := ptx.CopyFrom(ctx, pgx.Identifier{"blobs"}, []string{"name", "chunk", "data"}, src); err != nil {
			if src.err != nil {
				return fmt.Errorf("postgres: %s: %w", op, src.err)
			}
			return fmt.Errorf("postgres: %w", dbError(ctx, op, err))
		}
		return nil
	})
}

// chunkSource is the rows of a blob read from r, for CopyFrom. The blob's
// first row is written even when r yields nothing (an empty blob exists).
type chunkSource struct {
	name  string
	r     io.Reader
	buf   []byte
	chunk int
	n     int
	done  bool
	err   error // r's error
}

func (s *chunkSource) Next() bool {
	if s.done {
		return false
	}
	n, err := io.ReadFull(s.r, s.buf)
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		s.done = true
		if n == 0 && s.chunk > 0 {
			return false
		}
	case err != nil:
		s.err, s.done = err, true
		return false
	}
	s.n = n
	s.chunk++
	return true
}

func (s *chunkSource) Values() ([]any, error) { return []any{s.name, s.chunk - 1, s.buf[:s.n]}, nil }

func (s *chunkSource) Err() error { return s.err }

// DeleteBlob removes blob name, waiting for a write of it in progress. The
// table is then vacuumed (unless Config.NoVacuum), as after a forget: the
// engine deletes its vector snapshot when it forgets a memory.
func (d *DB) DeleteBlob(ctx context.Context, name string) error {
	if err := checkBlobName(name); err != nil {
		return err
	}
	op := "delete blob " + name
	var deleted int64
	err := d.blobTx(ctx, op, name, func(t *readTx, _ pgx.Tx) error {
		var err error
		if deleted, err = t.exec(`DELETE FROM blobs WHERE name = $1`, name); err != nil {
			return fmt.Errorf("postgres: %w", t.fail(op, err))
		}
		return nil
	})
	if err != nil || deleted == 0 || !d.vacuum {
		return err
	}
	// Best effort: the delete has committed, and autovacuum gets to the
	// rows later otherwise.
	if err := d.guard.Run(ctx, "vacuum blobs", func() error {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), vacuumWait)
		defer cancel()
		_, err := d.pool.Exec(ctx, `VACUUM blobs`)
		return err
	}); err != nil {
		slog.Warn("postgres: the VACUUM after deleting a blob did not complete; its rows stay in the table until a VACUUM of blobs runs",
			"schema", d.schema, "err", err)
	}
	return nil
}

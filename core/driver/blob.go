package driver

import (
	"context"
	"io"
)

// BlobStore is an optional interface of Backend for backends that keep
// named blobs in the store, beside the memories: data the engine derives
// from them and wants every process that opens the store to share. The
// engine keeps its vector index snapshot there when no snapshot file is
// configured, so that a process on any host starts from it instead of
// reading every vector from a database server a network hop away. A
// backend that implements it must pass its conformance case.
//
// Blobs are a cache of derived data, outside the change log: writing one
// does not advance Seq. The engine checks what it reads against the store,
// and deletes the ones that may hold a memory it forgets.
type BlobStore interface {
	// ReadBlob calls fn with a reader of blob name's bytes and their
	// number, in a read transaction: the reader is valid until fn returns,
	// and fn may stop before the end. It returns ErrNotFound, without
	// calling fn, when there is no such blob, and otherwise what fn returns.
	ReadBlob(ctx context.Context, name string, fn func(r io.Reader, size int64) error) error
	// WriteBlob replaces blob name (created when missing) by the bytes r
	// yields until io.EOF, in a transaction of its own that does not hold
	// up the writes of memories (a large blob takes a while). It first
	// runs check in that transaction, which sees every write committed
	// before check began; an error from check or r ends it and nothing is
	// written. Writes and deletes of one blob take turns: one that starts
	// while another is in progress waits for it, so a DeleteBlob that
	// follows a write of the memories removes a blob whose check ran
	// before that write committed.
	WriteBlob(ctx context.Context, name string, check func(tx ReadTx) error, r io.Reader) error
	// DeleteBlob removes blob name; a missing blob is not an error.
	DeleteBlob(ctx context.Context, name string) error
}

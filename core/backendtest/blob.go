package backendtest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/memos-go/memos/core/driver"
)

// testBlobs checks driver.BlobStore, when the backend offers it: a blob
// reads back byte for byte (an empty one, a small one, one of several MiB
// read in odd-sized pieces) with its size, a missing one is ErrNotFound,
// WriteBlob replaces (also by a shorter blob), and writes nothing when its
// check or its reader fails, DeleteBlob removes (a missing blob too,
// without error), a reader may stop early, blobs survive a reopen and
// change no memory and no change sequence; WriteBlob's check sees the
// writes committed before it; a write of memories does not wait for a
// WriteBlob in progress, and a DeleteBlob does.
func testBlobs(t *testing.T, f *fixture) {
	bs, ok := f.b.(driver.BlobStore)
	if !ok {
		t.Logf("%s does not implement driver.BlobStore; nothing to check", f.h.Name)
		return
	}
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	large := make([]byte, 5<<20+12345)
	for i := range large {
		large[i] = byte(rng.Uint32())
	}
	small := []byte("a small blob")
	read := func(name string) ([]byte, error) {
		var out bytes.Buffer
		err := f.b.(driver.BlobStore).ReadBlob(ctx, name, func(r io.Reader, size int64) error {
			buf := make([]byte, 7777) // odd-sized reads cross every boundary
			for {
				n, err := r.Read(buf)
				out.Write(buf[:n])
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					return err
				}
			}
			if int64(out.Len()) != size {
				t.Errorf("blob %s: ReadBlob says %d bytes, the reader gave %d", name, size, out.Len())
			}
			return nil
		})
		return out.Bytes(), err
	}
	check := func(what, name string, want []byte) {
		t.Helper()
		got, err := read(name)
		switch {
		case want == nil && !errors.Is(err, driver.ErrNotFound):
			t.Errorf("%s: blob %s: %d bytes, %v; want ErrNotFound", what, name, len(got), err)
		case want != nil && err != nil:
			t.Errorf("%s: blob %s: %v", what, name, err)
		case want != nil && !bytes.Equal(got, want):
			t.Errorf("%s: blob %s: the %d bytes read back differ from the %d written", what, name, len(got), len(want))
		}
	}
	write := func(name string, b []byte) {
		t.Helper()
		if err := f.b.(driver.BlobStore).WriteBlob(ctx, name, nil, bytes.NewReader(b)); err != nil {
			t.Fatalf("WriteBlob %s: %v", name, err)
		}
	}

	m := newMemory("a memory beside the blobs")
	f.insert(t, m)
	seq := f.seq(t)
	called := false
	if err := bs.ReadBlob(ctx, "large", func(io.Reader, int64) error { called = true; return nil }); !errors.Is(err, driver.ErrNotFound) || called {
		t.Errorf("ReadBlob of a missing blob: %v (fn called: %v); want ErrNotFound without calling fn", err, called)
	}
	write("large", large)
	write("small", small)
	write("empty", []byte{})
	if got := f.seq(t); got != seq {
		t.Errorf("writing blobs moved the change sequence from %d to %d; a blob is not a change of the memories", seq, got)
	}
	check("after WriteBlob", "large", large)
	check("after WriteBlob", "small", small)
	check("after WriteBlob", "empty", []byte{})

	// A reader may stop early; ReadBlob returns fn's error.
	errStop := errors.New("stop")
	err := bs.ReadBlob(ctx, "large", func(r io.Reader, _ int64) error {
		head := make([]byte, 16)
		if _, err := io.ReadFull(r, head); err != nil || !bytes.Equal(head, large[:16]) {
			t.Errorf("the first bytes of blob large: %x, %v; want %x", head, err, large[:16])
		}
		return errStop
	})
	if !errors.Is(err, errStop) {
		t.Errorf("ReadBlob whose fn stopped early: %v, want fn's error", err)
	}

	// The check sees what committed before it; its error, or the reader's,
	// writes nothing.
	err = bs.WriteBlob(ctx, "small", func(tx driver.ReadTx) error {
		if _, err := tx.Get(m.ID, 0); err != nil {
			t.Errorf("WriteBlob's check: Get(%d), committed before: %v", m.ID, err)
		}
		if s, err := tx.Seq(); err != nil || s != seq {
			t.Errorf("WriteBlob's check: Seq %d, %v; want %d", s, err, seq)
		}
		return errStop
	}, bytes.NewReader(large))
	if !errors.Is(err, errStop) {
		t.Errorf("WriteBlob whose check failed: %v, want the check's error", err)
	}
	errRead := errors.New("reader failed")
	err = bs.WriteBlob(ctx, "small", nil, io.MultiReader(bytes.NewReader(large), failReader{errRead}))
	if !errors.Is(err, errRead) {
		t.Errorf("WriteBlob whose reader failed: %v, want the reader's error", err)
	}
	check("after a failed check and a failed reader", "small", small)

	shorter := large[:blobShort]
	write("large", shorter)
	f.reopen(t)
	bs = f.b.(driver.BlobStore)
	check("replaced by a shorter blob, after reopening", "large", shorter)
	check("after reopening", "small", small)
	if err := bs.DeleteBlob(ctx, "large"); err != nil {
		t.Fatal(err)
	}
	if err := bs.DeleteBlob(ctx, "never-written"); err != nil {
		t.Errorf("DeleteBlob of a missing blob: %v, want nil", err)
	}
	check("after DeleteBlob", "large", nil)
	check("after deleting another blob", "small", small)

	// A write of memories while a WriteBlob is in progress (between its
	// check and its end) does not wait for it; a DeleteBlob then started
	// waits for it and removes the blob it wrote.
	release := make(chan struct{})
	writeDone, deleteDone := make(chan error, 1), make(chan error, 1)
	during := newMemory("written while a blob was")
	go func() {
		writeDone <- bs.WriteBlob(ctx, "large", func(driver.ReadTx) error {
			go func() {
				wctx, cancel := context.WithTimeout(ctx, time.Minute)
				defer cancel()
				err := f.b.Update(wctx, func(tx driver.Tx) error { return tx.Insert(during) })
				if err != nil {
					err = errors.Join(errors.New("a write of memories waited for WriteBlob"), err)
				}
				close(release)
				deleteDone <- err
			}()
			return nil
		}, io.MultiReader(bytes.NewReader(large[:1<<20]), waitReader{release}, bytes.NewReader(large)))
	}()
	if err := <-deleteDone; err != nil {
		t.Fatal(err)
	}
	go func() { deleteDone <- bs.DeleteBlob(ctx, "large") }()
	if err := errors.Join(<-writeDone, <-deleteDone); err != nil {
		t.Fatal(err)
	}
	check("after a DeleteBlob that started during a WriteBlob", "large", nil)
	if got := f.get(t, during.ID, 0); got.Content != during.Content {
		t.Errorf("memory %d written during a WriteBlob: %q, want %q", during.ID, got.Content, during.Content)
	}
	if got := f.get(t, m.ID, 0); got.Content != m.Content {
		t.Errorf("memory %d after the blob writes: %q, want %q", m.ID, got.Content, m.Content)
	}
}

// blobShort is the length of the shorter blob that replaces a longer one:
// not a multiple of a power of two, so that a backend's chunks end mid-way.
const blobShort = 1<<20 + 3

// failReader fails every read with err.
type failReader struct{ err error }

func (r failReader) Read([]byte) (int, error) { return 0, r.err }

// waitReader yields nothing, once c is closed.
type waitReader struct{ c chan struct{} }

func (r waitReader) Read([]byte) (int, error) {
	<-r.c
	return 0, io.EOF
}

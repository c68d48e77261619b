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
	if _, ok := f.b.(driver.BlobStore); !ok {
		t.Logf("%s does not implement driver.BlobStore; nothing to check", f.h.Name)
		return
	}
	rng := rand.New(rand.NewPCG(1, 2))
	c := &blobCase{t: t, f: f, ctx: context.Background(), large: make([]byte, 5<<20+12345), small: []byte("a small blob")}
	for i := range c.large {
		c.large[i] = byte(rng.Uint32())
	}
	m := newMemory("a memory beside the blobs")
	f.insert(t, m)
	seq := f.seq(t)
	c.writeAndRead(seq)
	c.failures(m, seq)
	c.replaceAndDelete()
	c.concurrent()
	if got := f.get(t, m.ID, 0); got.Content != m.Content {
		t.Errorf("memory %d after the blob writes: %q, want %q", m.ID, got.Content, m.Content)
	}
}

// blobCase is the state of testBlobs and its phases.
type blobCase struct {
	t            *testing.T
	f            *fixture
	ctx          context.Context
	large, small []byte
}

// bs is the backend's BlobStore (the backend changes on a reopen).
func (c *blobCase) bs() driver.BlobStore { return c.f.b.(driver.BlobStore) }

// read reads blob name back in odd-sized pieces, and checks its size.
func (c *blobCase) read(name string) ([]byte, error) {
	var out bytes.Buffer
	err := c.bs().ReadBlob(c.ctx, name, func(r io.Reader, size int64) error {
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
			c.t.Errorf("blob %s: ReadBlob says %d bytes, the reader gave %d", name, size, out.Len())
		}
		return nil
	})
	return out.Bytes(), err
}

// check reads blob name and compares it with want (nil: no such blob).
func (c *blobCase) check(what, name string, want []byte) {
	c.t.Helper()
	got, err := c.read(name)
	switch {
	case want == nil && !errors.Is(err, driver.ErrNotFound):
		c.t.Errorf("%s: blob %s: %d bytes, %v; want ErrNotFound", what, name, len(got), err)
	case want != nil && err != nil:
		c.t.Errorf("%s: blob %s: %v", what, name, err)
	case want != nil && !bytes.Equal(got, want):
		c.t.Errorf("%s: blob %s: the %d bytes read back differ from the %d written", what, name, len(got), len(want))
	}
}

// write writes blob name.
func (c *blobCase) write(name string, b []byte) {
	c.t.Helper()
	if err := c.bs().WriteBlob(c.ctx, name, nil, bytes.NewReader(b)); err != nil {
		c.t.Fatalf("WriteBlob %s: %v", name, err)
	}
}

// writeAndRead: a missing blob is ErrNotFound without calling fn; blobs
// read back byte for byte and move no change sequence.
func (c *blobCase) writeAndRead(seq uint64) {
	called := false
	if err := c.bs().ReadBlob(c.ctx, "large", func(io.Reader, int64) error { called = true; return nil }); !errors.Is(err, driver.ErrNotFound) || called {
		c.t.Errorf("ReadBlob of a missing blob: %v (fn called: %v); want ErrNotFound without calling fn", err, called)
	}
	c.write("large", c.large)
	c.write("small", c.small)
	c.write("empty", []byte{})
	if got := c.f.seq(c.t); got != seq {
		c.t.Errorf("writing blobs moved the change sequence from %d to %d; a blob is not a change of the memories", seq, got)
	}
	c.check("after WriteBlob", "large", c.large)
	c.check("after WriteBlob", "small", c.small)
	c.check("after WriteBlob", "empty", []byte{})
}

// failures: a reader may stop early (ReadBlob returns fn's error);
// WriteBlob's check sees what committed before it (m, at seq), and its
// error, or the reader's, writes nothing.
func (c *blobCase) failures(m *driver.Memory, seq uint64) {
	errStop := errors.New("stop")
	err := c.bs().ReadBlob(c.ctx, "large", func(r io.Reader, _ int64) error {
		head := make([]byte, 16)
		if _, err := io.ReadFull(r, head); err != nil || !bytes.Equal(head, c.large[:16]) {
			c.t.Errorf("the first bytes of blob large: %x, %v; want %x", head, err, c.large[:16])
		}
		return errStop
	})
	if !errors.Is(err, errStop) {
		c.t.Errorf("ReadBlob whose fn stopped early: %v, want fn's error", err)
	}
	err = c.bs().WriteBlob(c.ctx, "small", func(tx driver.ReadTx) error {
		if _, err := tx.Get(m.ID, 0); err != nil {
			c.t.Errorf("WriteBlob's check: Get(%d), committed before: %v", m.ID, err)
		}
		if s, err := tx.Seq(); err != nil || s != seq {
			c.t.Errorf("WriteBlob's check: Seq %d, %v; want %d", s, err, seq)
		}
		return errStop
	}, bytes.NewReader(c.large))
	if !errors.Is(err, errStop) {
		c.t.Errorf("WriteBlob whose check failed: %v, want the check's error", err)
	}
	errRead := errors.New("reader failed")
	err = c.bs().WriteBlob(c.ctx, "small", nil, io.MultiReader(bytes.NewReader(c.large), failReader{errRead}))
	if !errors.Is(err, errRead) {
		c.t.Errorf("WriteBlob whose reader failed: %v, want the reader's error", err)
	}
	c.check("after a failed check and a failed reader", "small", c.small)
}

// replaceAndDelete: WriteBlob replaces, also by a shorter blob; blobs
// survive a reopen; DeleteBlob removes, a missing blob without error.
func (c *blobCase) replaceAndDelete() {
	shorter := c.large[:blobShort]
	c.write("large", shorter)
	c.f.reopen(c.t)
	c.check("replaced by a shorter blob, after reopening", "large", shorter)
	c.check("after reopening", "small", c.small)
	if err := c.bs().DeleteBlob(c.ctx, "large"); err != nil {
		c.t.Fatal(err)
	}
	if err := c.bs().DeleteBlob(c.ctx, "never-written"); err != nil {
		c.t.Errorf("DeleteBlob of a missing blob: %v, want nil", err)
	}
	c.check("after DeleteBlob", "large", nil)
	c.check("after deleting another blob", "small", c.small)
}

// concurrent: a write of memories while a WriteBlob is in progress
// (between its check and its end) does not wait for it; a DeleteBlob then
// started waits for it and removes the blob it wrote.
func (c *blobCase) concurrent() {
	bs, ctx := c.bs(), c.ctx
	release := make(chan struct{})
	writeDone, deleteDone := make(chan error, 1), make(chan error, 1)
	during := newMemory("written while a blob was")
	go func() {
		writeDone <- bs.WriteBlob(ctx, "large", func(driver.ReadTx) error {
			go func() {
				wctx, cancel := context.WithTimeout(ctx, time.Minute)
				defer cancel()
				err := c.f.b.Update(wctx, func(tx driver.Tx) error { return tx.Insert(during) })
				if err != nil {
					err = errors.Join(errors.New("a write of memories waited for WriteBlob"), err)
				}
				close(release)
				deleteDone <- err
			}()
			return nil
		}, io.MultiReader(bytes.NewReader(c.large[:1<<20]), waitReader{release}, bytes.NewReader(c.large)))
	}()
	if err := <-deleteDone; err != nil {
		c.t.Fatal(err)
	}
	go func() { deleteDone <- bs.DeleteBlob(ctx, "large") }()
	if err := errors.Join(<-writeDone, <-deleteDone); err != nil {
		c.t.Fatal(err)
	}
	c.check("after a DeleteBlob that started during a WriteBlob", "large", nil)
	if got := c.f.get(c.t, during.ID, 0); got.Content != during.Content {
		c.t.Errorf("memory %d written during a WriteBlob: %q, want %q", during.ID, got.Content, during.Content)
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

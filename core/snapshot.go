package core

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// A vector snapshot lets a large store open without re-reading every vector
// from the backend: the engine saves its vector index next to the store on
// Close and, on Open, loads it and replays only the change log written since.
// The header names the model, the index kind and the change-log seq the
// snapshot reflects; a snapshot that does not match the store is ignored and
// the index is rebuilt from the store. Forget deletes the snapshot at once,
// so no derived copy of a forgotten memory's vector stays on disk.

const snapshotMagic = "MEMOSVS1"

// snapshotHeader precedes the index's own serialisation.
type snapshotHeader struct {
	Model string
	Dim   int
	Index string
	Seq   uint64
}

func writeString(w io.Writer, s string) error {
	if err := binary.Write(w, binary.LittleEndian, uint16(len(s))); err != nil {
		return err
	}
	_, err := io.WriteString(w, s)
	return err
}

func readString(r io.Reader) (string, error) {
	var n uint16
	if err := binary.Read(r, binary.LittleEndian, &n); err != nil {
		return "", err
	}
	b := make([]byte, n)
	_, err := io.ReadFull(r, b)
	return string(b), err
}

// saveSnapshot writes idx to path atomically (temporary file, then rename).
func saveSnapshot(path string, h snapshotHeader, idx PersistentVectorIndex) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	w := bufio.NewWriter(tmp)
	if _, err = io.WriteString(w, snapshotMagic); err != nil {
		return err
	}
	err = errors.Join(writeString(w, h.Model), binary.Write(w, binary.LittleEndian, uint32(h.Dim)),
		writeString(w, h.Index), binary.Write(w, binary.LittleEndian, h.Seq))
	if err != nil {
		return err
	}
	if err = idx.Save(w); err != nil {
		return err
	}
	if err = w.Flush(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// loadSnapshot reads the snapshot at path if it matches want (model, dim,
// index kind). It returns the index and the seq it reflects; a missing file
// is (nil, 0, nil).
func loadSnapshot(path string, want snapshotHeader, load func(io.Reader) (VectorIndex, error)) (VectorIndex, uint64, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	magic := make([]byte, len(snapshotMagic))
	if _, err := io.ReadFull(r, magic); err != nil || string(magic) != snapshotMagic {
		return nil, 0, fmt.Errorf("%s is not a memos vector snapshot", path)
	}
	var h snapshotHeader
	var dim uint32
	if h.Model, err = readString(r); err == nil {
		if err = binary.Read(r, binary.LittleEndian, &dim); err == nil {
			if h.Index, err = readString(r); err == nil {
				err = binary.Read(r, binary.LittleEndian, &h.Seq)
			}
		}
	}
	if err != nil {
		return nil, 0, fmt.Errorf("snapshot %s: header: %w", path, err)
	}
	h.Dim = int(dim)
	if h.Model != want.Model || h.Dim != want.Dim || h.Index != want.Index {
		return nil, 0, fmt.Errorf("snapshot %s is of %s/%d/%s, the engine uses %s/%d/%s", path, h.Model, h.Dim, h.Index, want.Model, want.Dim, want.Index)
	}
	idx, err := load(r)
	if err != nil {
		return nil, 0, fmt.Errorf("snapshot %s: %w", path, err)
	}
	return idx, h.Seq, nil
}

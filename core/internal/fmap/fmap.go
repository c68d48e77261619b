// Package fmap reads a file whole without copying it where the system
// allows: on Unix the file is mapped into memory read-only, so that a large
// file read once per process (the vector snapshot a CLI command loads) costs
// neither a copy nor heap memory, and its pages are shared with the page
// cache. Elsewhere (Windows) the file is read into memory: a mapped file
// cannot be replaced there while it is mapped, and the snapshot is replaced
// by renaming a new file over it.
//
// A mapped file must not be truncated or written in place while it is
// mapped (a read past its new end faults): writers replace it by renaming
// a new file over it, which leaves the mapped one intact.
package fmap

import (
	"fmt"
	"os"
	"sync"
)

// Map returns the contents of the file at path and a function that
// releases them. The bytes must not be written, and not be read after
// release; release may be called more than once and from any goroutine.
// A missing file is an error that wraps os.ErrNotExist.
func Map(path string) (data []byte, release func(), err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	size := st.Size()
	if size != int64(int(size)) {
		return nil, nil, fmt.Errorf("map %s: %d bytes do not fit in memory", path, size)
	}
	if size == 0 {
		return []byte{}, func() {}, nil
	}
	data, unmap, err := mapFile(f, int(size))
	if err != nil {
		return nil, nil, fmt.Errorf("map %s: %w", path, err)
	}
	var once sync.Once
	return data, func() { once.Do(unmap) }, nil
}

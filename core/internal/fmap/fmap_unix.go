//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package fmap

import (
	"os"
	"syscall"
)

// Mapped reports whether Map maps files (rather than reading them).
const Mapped = true

func mapFile(f *os.File, size int) ([]byte, func(), error) {
	data, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return data, func() { syscall.Munmap(data) }, nil
}

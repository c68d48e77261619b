//go:build unix

package bench

import (
	"io/fs"
	"syscall"
)

// allocated returns the bytes the file system allocated for a file (what du
// counts), or its size where that is unknown.
func allocated(info fs.FileInfo) int64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return int64(st.Blocks) * 512
	}
	return info.Size()
}

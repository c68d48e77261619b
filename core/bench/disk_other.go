//go:build !unix

package bench

import "io/fs"

// allocated returns a file's size: this platform does not say how much of
// it the file system allocated.
func allocated(info fs.FileInfo) int64 { return info.Size() }

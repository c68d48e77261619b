//go:build !linux

package plugins

import "os/exec"

// dieWithParent is a no-op outside Linux; hosts must call KillAll or Close.
func dieWithParent(*exec.Cmd) {}

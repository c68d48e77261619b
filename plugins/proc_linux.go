package plugins

import (
	"os/exec"
	"syscall"
)

// dieWithParent asks the kernel to SIGKILL the plugin when memos dies, so
// a crashed or killed host leaves no orphan. (Linux sends the signal when
// the thread that started the child exits; Go only ends threads whose
// goroutine locked them, which the loader never does.)
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

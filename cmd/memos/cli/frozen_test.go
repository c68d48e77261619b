package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// procState returns the state letter of pid from /proc/<pid>/stat ("R",
// "S", "T" stopped, "Z" zombie), or "" when there is no such process.
func procState(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return ""
	}
	return s[i+2 : i+3]
}

// TestBinaryFrozenPlugin runs the real memos binary with a plugin that
// stops itself (SIGSTOP) in the middle of an Embed call, which is what a
// debugger, a suspended container or an overloaded machine can do to a
// plugin. memos must neither hang on the call nor on shutting the plugin
// down: a call timeout ends the command with "unavailable" (6), SIGTERM and
// SIGINT end it with 130, and in every case the plugin process is gone.
func TestBinaryFrozenPlugin(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc to see the plugin process's state")
	}
	t.Parallel()
	bin := buildMemos(t)
	plugin := buildPlugin(t, "./testdata/brokenplugin")

	for _, tc := range []struct {
		name        string
		callTimeout string
		signal      syscall.Signal // 0: none, the call timeout ends the call
		code        int
	}{
		{"call timeout", "1s", 0, 6},
		{"SIGTERM", "10m", syscall.SIGTERM, 130},
		{"SIGINT", "10m", syscall.SIGINT, 130},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := filepath.Join(t.TempDir(), "home")
			pidfile := filepath.Join(t.TempDir(), "pid")
			if err := os.MkdirAll(home, 0o700); err != nil {
				t.Fatal(err)
			}
			cfg := fmt.Sprintf("embedder:\n  name: plugin\n  plugin:\n    path: %s\n    args: [stop, %q]\n    call_timeout: %s\n",
				plugin, pidfile, tc.callTimeout)
			if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o600); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(bin, "add", "this text freezes the plugin")
			cmd.Env = []string{"HOME=" + t.TempDir(), "MEMOS_HOME=" + home, "GORACE=atexit_sleep_ms=0"}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			pid := 0
			t.Cleanup(func() {
				cmd.Process.Kill()
				if pid > 0 {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			})

			// Wait until the plugin has stopped itself inside Embed.
			watchdog := time.After(20 * time.Second)
			for pid == 0 || procState(pid) != "T" {
				select {
				case err := <-exited:
					t.Fatalf("memos add ended (%v) before the plugin stopped: %s", err, stderr.String())
				case <-watchdog:
					t.Fatalf("the plugin never stopped itself (pid %d): %s", pid, stderr.String())
				case <-time.After(10 * time.Millisecond):
				}
				if b, err := os.ReadFile(pidfile); err == nil && len(b) > 0 {
					if pid, err = strconv.Atoi(string(b)); err != nil {
						t.Fatal(err)
					}
				}
			}
			if tc.signal != 0 {
				if err := cmd.Process.Signal(tc.signal); err != nil {
					t.Fatal(err)
				}
			}

			var err error
			select {
			case err = <-exited:
			case <-time.After(20 * time.Second):
				t.Fatalf("memos add still runs 20s after the plugin froze (call timeout %s, signal %v): it hangs",
					tc.callTimeout, tc.signal)
			}
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tc.code {
				t.Errorf("memos add: exit %d, want %d; stderr:\n%s", code, tc.code, stderr.String())
			}
			if tc.signal == 0 && !strings.Contains(stderr.String(), "call_timeout") {
				t.Errorf("the error does not name call_timeout: %s", stderr.String())
			}
			// memos reaps its plugin before it exits; a zombie would mean it
			// died without waiting, a stopped or running process an orphan.
			if st := procState(pid); st != "" {
				t.Errorf("the plugin process %d is still there after memos exited (state %s)", pid, st)
			}
		})
	}
}

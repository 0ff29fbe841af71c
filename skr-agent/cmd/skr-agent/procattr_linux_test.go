package main_test

import (
	"os/exec"
	"syscall"
)

// stopWithParent makes the kernel send SIGTERM to the agent when the test
// process dies, so that an interrupted benchmark leaves no agent behind.
func stopWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}

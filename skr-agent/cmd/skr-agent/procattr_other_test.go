//go:build !linux

package main_test

import "os/exec"

// stopWithParent has no portable equivalent outside Linux.
func stopWithParent(*exec.Cmd) {}

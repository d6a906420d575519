//go:build !linux

package secondarytest

import "syscall"

// ProcAttr puts a server in its own process group, so that a ^C to the
// test does not reach it before the test's cleanup does.
func ProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

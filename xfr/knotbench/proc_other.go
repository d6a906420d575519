//go:build !linux

package knotbench

import "syscall"

// procAttr puts a server in its own process group, so that a ^C to the
// benchmark does not reach it before Stop does.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

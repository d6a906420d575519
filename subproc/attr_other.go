//go:build !linux

package subproc

import "syscall"

// Attr puts a server in its own process group, so that a ^C to its
// starter does not reach it before the starter's cleanup does. Only
// Linux can also tie the server's life to its starter's.
func Attr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

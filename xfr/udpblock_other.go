//go:build !linux

package xfr

import "errors"

// udpFD is Linux's alone (udpblock_linux.go): elsewhere every socket is
// read through the netpoller.
type udpFD struct{}

func (u *udpServer) detach() *udpFD   { return nil }
func (f *udpFD) stop()                {}
func (u *udpServer) serveFD(f *udpFD) {}
func blockedThreads(int)              {}

func (f *udpFD) writeNow(udpControl, *udpPacket, []byte) (int, error) {
	return 0, errors.New("no blocking sockets here")
}

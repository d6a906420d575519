//go:build linux

package xfr

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A socket that one worker serves alone (ListenUDP's) is read with
// blocking recvmmsg, which holds a thread while it waits, as Knot reads its sockets,
// rather than through Go's netpoller. With a few queries in flight per
// socket most reads found it empty, and each of those cost a failed
// recvmmsg, the goroutine parked, epoll_wait and a wake-up: more than
// answering a query from the cache. The worker reads a descriptor of its
// own (a dup) and closes the *net.UDPConn, which takes the socket out of
// Go's epoll set; left there, every datagram would wake the netpoller for
// nothing. stop shuts the socket down for reading, which ends a blocked
// recvmmsg at once; udpReadTimeout bounds the wait should it not.

// A thread blocked in recvmmsg keeps its P (the runtime's right to run Go
// code) in the syscall state. With as many such threads as GOMAXPROCS no
// P is ever idle, so sysmon takes a P back from a blocked thread at each
// of its ticks (20 us), which also keeps it from slowing its ticks down
// to 10 ms: at a few queries in flight it ran 50,000 times a second,
// about a tenth of the server's CPU per query, and every other goroutine
// (TCP, the garbage collector, timers) waited for such a retake to run.
// One P more than the blocked threads leaves one idle, and sysmon lets a
// thread in a syscall keep its P for up to 10 ms. It does not let more
// Go code run at once than before: the blocked threads run none.
var blockedProcs struct {
	sync.Mutex
	threads int // reading with blocking system calls
	added   int // to GOMAXPROCS for them
}

// blockedThreads notes that d more threads (fewer, when negative) read
// with blocking system calls, and sets GOMAXPROCS so that one P is left
// while they all wait: raised as they start, given back once none is
// left, so that a process serving in turns (tests) does not ratchet.
func blockedThreads(d int) {
	blockedProcs.Lock()
	defer blockedProcs.Unlock()
	b := &blockedProcs
	b.threads += d
	switch n := runtime.GOMAXPROCS(0); {
	case b.threads >= n:
		runtime.GOMAXPROCS(b.threads + 1)
		b.added += b.threads + 1 - n
	case b.threads == 0 && b.added > 0:
		runtime.GOMAXPROCS(max(1, n-b.added))
		b.added = 0
	}
}

// udpYieldEvery is how often a worker yields its goroutine's place. One
// that never does is one that sysmon finds on the same scheduling tick
// for 10 ms and preempts: a signal that ends its recvmmsg early (EINTR),
// its P taken back while it sits in the system call, and sysmon then
// ticking every 20 us again for a millisecond and more, every 10 ms per
// worker (3,300 sleeps a second of sysmon with two workers at 35,000
// queries/s, against 120 with the yield). A yield costs a goroutine put
// on the global queue and taken back, and a spinning thread woken for
// nothing, so it comes as seldom as keeps it under sysmon's 10 ms. The
// goroutine is not locked to its thread: a locked one hands its P to
// another thread and back at each yield or preemption.
const udpYieldEvery = 5 * time.Millisecond

// udpReadTimeout is the longest a blocked read waits before it looks
// whether the server stops (a variable for tests).
var udpReadTimeout = 500 * time.Millisecond

// udpFD is a socket read and written with blocking system calls by one
// worker. msgs, iovs and wmsgs, wiovs are that worker's alone.
type udpFD struct {
	fd      int
	stopped atomic.Bool
	msgs    [udpBatch]unix.Mmsghdr
	iovs    [udpBatch]unix.Iovec
	wmsgs   [udpBatch]unix.Mmsghdr
	wiovs   [udpBatch]unix.Iovec
}

// detach takes the socket of u from the netpoller for blocking reads, and
// returns nil (u unchanged) when it cannot.
func (u *udpServer) detach() *udpFD {
	rc, err := u.conn.SyscallConn()
	if err != nil {
		return nil
	}
	fd := -1
	if rc.Control(func(s uintptr) { fd, _ = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0) }) != nil || fd < 0 {
		return nil
	}
	tv := unix.NsecToTimeval(udpReadTimeout.Nanoseconds())
	if unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv) != nil {
		unix.Close(fd)
		return nil
	}
	// Blocking mode belongs to the open socket, which the conn shares:
	// close the conn (out of epoll) before setting it.
	u.conn.Close()
	if unix.SetNonblock(fd, false) != nil {
		unix.Close(fd)
		return nil
	}
	return &udpFD{fd: fd}
}

// stop makes serveFD return once it has answered what it read.
func (f *udpFD) stop() {
	// Linux shuts an unconnected UDP socket down all the same, and wakes
	// its readers, though it reports ENOTCONN. Before stopped is set:
	// serveFD closes the descriptor once it sees that, and its number
	// may then be another socket's.
	_ = unix.Shutdown(f.fd, unix.SHUT_RD)
	f.stopped.Store(true)
}

// serveFD serves the socket f as alone serves a conn, until f is stopped,
// then closes it.
func (u *udpServer) serveFD(f *udpFD) {
	defer blockedThreads(-1) // counted by Run as it detached f
	defer unix.Close(f.fd)
	ps := getPackets()
	defer putPackets(ps)
	var nw nameWriter
	last := time.Now()
	for batches := 0; !f.stopped.Load(); batches++ {
		// The clock read every fourth batch: about a millisecond apart
		// under load, at most a few at its largest batches.
		if batches%4 == 0 {
			if now := time.Now(); now.Sub(last) >= udpYieldEvery {
				runtime.Gosched() // see udpYieldEvery
				last = now
			}
		}
		if h := u.s.udpReadHook; h != nil {
			h()
		}
		n, err := f.read(ps)
		if err != nil {
			continue // the timeout, a signal, an ICMP error reported on the socket
		}
		batch := ps[:n]
		for _, p := range batch {
			u.countDrops(p)
			u.serve(p, &nw)
		}
		f.write(u.ctl, batch)
		for _, p := range batch {
			p.answer, p.wbuf[0], p.st, p.remote = nil, nil, nil, nil
		}
	}
}

// read reads into ps as many datagrams as are waiting, waiting for the
// first (MSG_WAITFORONE).
func (f *udpFD) read(ps []*udpPacket) (int, error) {
	ps = ps[:min(len(ps), len(f.msgs))]
	for i, p := range ps {
		f.iovs[i] = unix.Iovec{Base: &p.buf[0]}
		f.iovs[i].SetLen(len(p.buf))
		h := &f.msgs[i].Hdr
		*h = unix.Msghdr{Name: &p.name[0], Namelen: uint32(len(p.name)), Iov: &f.iovs[i], Control: &p.oob[0]}
		h.SetIovlen(1)
		h.SetControllen(len(p.oob))
	}
	r, _, errno := unix.Syscall6(unix.SYS_RECVMMSG, uintptr(f.fd), uintptr(unsafe.Pointer(&f.msgs[0])),
		uintptr(len(ps)), unix.MSG_WAITFORONE, 0, 0)
	if errno != 0 {
		return 0, errno
	}
	n := min(int(r), len(ps))
	for i, p := range ps[:n] {
		m := &f.msgs[i]
		p.n, p.oobn = min(int(m.Len), len(p.buf)), min(int(m.Hdr.Controllen), len(p.oob))
		p.namelen = min(m.Hdr.Namelen, uint32(len(p.name)))
		p.from, p.remote = sockaddrAddrPort(p.name[:p.namelen]), nil
	}
	return n, nil
}

// write sends the answers of ps, each to the address its request came
// from and from the address it was sent to, with as few sendmmsg calls
// as the kernel takes them in. A datagram the kernel refuses is skipped.
func (f *udpFD) write(c udpControl, ps []*udpPacket) {
	msgs := f.wmsgs[:0]
	for _, p := range ps {
		if len(p.answer) == 0 || p.namelen == 0 {
			continue
		}
		i := len(msgs)
		f.wiovs[i] = unix.Iovec{Base: &p.answer[0]}
		f.wiovs[i].SetLen(len(p.answer))
		msgs = msgs[:i+1]
		f.setHeader(&msgs[i].Hdr, p, &f.wiovs[i], c.reply(p.oob[:p.oobn], p.replyOOB[:0]))
	}
	f.send(msgs)
	clear(f.wiovs[:len(msgs)])
	clear(msgs)
}

func (f *udpFD) setHeader(h *unix.Msghdr, p *udpPacket, iov *unix.Iovec, oob []byte) {
	*h = unix.Msghdr{Name: &p.name[0], Namelen: p.namelen, Iov: iov}
	h.SetIovlen(1)
	if len(oob) > 0 {
		h.Control = &oob[0]
		h.SetControllen(len(oob))
	}
}

// writeNow sends b at once as an answer to p.
func (f *udpFD) writeNow(c udpControl, p *udpPacket, b []byte) (int, error) {
	if len(b) == 0 || p.namelen == 0 {
		return 0, errors.New("nothing to send, or nowhere")
	}
	var m [1]unix.Mmsghdr
	iov := unix.Iovec{Base: &b[0]}
	iov.SetLen(len(b))
	var oob [oobSize]byte
	f.setHeader(&m[0].Hdr, p, &iov, c.reply(p.oob[:p.oobn], oob[:0]))
	if f.send(m[:]) == 0 {
		return 0, errors.New("datagram refused")
	}
	return len(b), nil
}

// send sends msgs with sendmmsg, skipping any the kernel refuses, and
// returns how many it took.
func (f *udpFD) send(msgs []unix.Mmsghdr) (sent int) {
	for len(msgs) > 0 {
		r, _, errno := unix.Syscall6(unix.SYS_SENDMMSG, uintptr(f.fd), uintptr(unsafe.Pointer(&msgs[0])),
			uintptr(len(msgs)), 0, 0, 0)
		n := int(r)
		switch {
		case errno == unix.EINTR:
			continue
		case errno != 0:
			n = 1 // the first refused
		default:
			sent += n
		}
		msgs = msgs[min(max(n, 1), len(msgs)):]
	}
	return sent
}

// sockaddrAddrPort reads a sockaddr_in or sockaddr_in6; the zero
// AddrPort when sa is neither.
func sockaddrAddrPort(sa []byte) netip.AddrPort {
	if len(sa) < 2 {
		return netip.AddrPort{}
	}
	switch binary.NativeEndian.Uint16(sa) {
	case unix.AF_INET:
		if len(sa) >= unix.SizeofSockaddrInet4 {
			return netip.AddrPortFrom(netip.AddrFrom4([4]byte(sa[4:8])), binary.BigEndian.Uint16(sa[2:]))
		}
	case unix.AF_INET6:
		if len(sa) >= unix.SizeofSockaddrInet6 {
			a := netip.AddrFrom16([16]byte(sa[8:24]))
			if scope := binary.NativeEndian.Uint32(sa[24:]); scope != 0 {
				a = a.WithZone(strconv.FormatUint(uint64(scope), 10))
			}
			return netip.AddrPortFrom(a, binary.BigEndian.Uint16(sa[2:]))
		}
	}
	return netip.AddrPort{}
}

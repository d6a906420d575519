package xfr

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/store"
)

// shapedZone fills a store with records shaped as xfr/knotbench's zone
// (an A and a TXT per instance, one instance in three also in a
// service: an A, a TXT and an SRV more), given unsorted as knotbench
// gives them, so that the nodes lie on the heap in generation order
// rather than in the canonical order a transfer reads them in.
func shapedZone(b *testing.B, records int) *store.Store {
	recs := make([]store.Record, 0, records)
	add := func(name, typ, data string) {
		if len(recs) < records {
			recs = append(recs, rec(name, typ, data))
		}
	}
	for i := 0; len(recs) < records; i++ {
		account := shapedUUID(1, uint64(i/30))
		vm := shapedUUID(2, uint64(i))
		name := vm + ".inst." + account + ".example.test."
		addr := fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255)
		add(name, "A", addr)
		add(name, "TXT", `"`+vm+`"`)
		if i%3 == 0 {
			svc := fmt.Sprintf("svc%d.svc.%s.example.test.", i/3%3, account)
			add(svc, "A", addr)
			add(svc, "TXT", `"`+vm+`"`)
			add("_http._tcp."+svc, "SRV", "0 10 80 "+name)
		}
	}
	return storeOf(b, recs)
}

// shapedUUID is a UUID-looking string derived from (kind, i), so that
// names share no long prefixes.
func shapedUUID(kind, i uint64) string {
	mix := func(x uint64) uint64 {
		x += 0x9e3779b97f4a7c15
		x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
		x = (x ^ x>>27) * 0x94d049bb133111eb
		return x ^ x>>31
	}
	a, c := mix(kind<<56^i), mix(^(kind<<56 ^ i))
	return fmt.Sprintf("%08x-%04x-4%03x-%04x-%012x",
		a>>32, a>>16&0xffff, a&0xfff, c>>48&0x3fff|0x8000, c&0xffffffffffff)
}

// hashWriter is a recorder that hashes what transfers write, when h is
// set, with the octets of serial (which follows the clock) zeroed.
type hashWriter struct {
	recorder
	h      hash.Hash
	serial []byte
}

func (w *hashWriter) Write(b []byte) (int, error) {
	if w.h != nil {
		w.h.Write(bytes.ReplaceAll(b, w.serial, make([]byte, len(w.serial))))
	}
	return w.recorder.Write(b)
}

// cpuTime is the user and system CPU time of this process so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkAXFRShaped is the server's work alone for an AXFR of a zone
// shaped as knotbench's, written to a connection that only hashes it:
// the CPU knotbench's BenchmarkAXFR measures in its cnsd child, without
// the client and the loopback. The hash it logs, of the first
// transfer, is the same for every change that keeps the messages as
// they are.
func BenchmarkAXFRShaped(b *testing.B) {
	for _, size := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("records=%d", size), func(b *testing.B) {
			if size > 100_000 && testing.Short() {
				b.Skip("1M records: not under -short")
			}
			src := shapedZone(b, size)
			s := New(testConfig(b, loopbackTransfers), src, Options{}, nil)
			st := s.settings()
			r := new(dns.Msg).SetAxfr("example.test.")
			r.Id = 1
			remote := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5300}
			first := &hashWriter{recorder: recorder{remote: remote}, h: sha256.New(),
				serial: binary.BigEndian.AppendUint32(nil, uint32(src.Snapshot("example.test.").Serial()))}
			s.serveAXFR(first, r, st)
			b.Logf("%d octets, hash %x", first.written, first.h.Sum(nil)[:8])
			b.ReportAllocs()
			cpu0 := cpuTime(b)
			for b.Loop() {
				w := &hashWriter{recorder: recorder{remote: remote}}
				s.serveAXFR(w, r, st)
				if w.written != first.written {
					b.Fatalf("%d octets written, then %d", first.written, w.written)
				}
			}
			b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
		})
	}
}

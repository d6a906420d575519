package redis

import (
	"os/exec"
	"testing"
	"time"

	"github.com/cnsd/cnsd/store/redistest"
)

// BenchmarkWriterTakeover measures how long a standby takes to write
// after the writer dies: two writer processes (the test binary, with the
// default lease TTL) on one redis-server; the one holding the lease is
// killed with SIGKILL, so it cannot release it. It reports the seconds
// from the kill until the standby holds the lease (takeover-s) and until
// its first commit (first-commit-s); both stay within the TTL
// (ttl-s), because a standby tries again the moment the lease expires.
func BenchmarkWriterTakeover(b *testing.B) {
	srv := redistest.Start(b)
	ttl := DefaultLeaseTTL
	var takeover, commit time.Duration
	for i := range b.N {
		events := make(chan redisWriterEvent, 1000)
		env := helperTTLEnv + "=" + ttl.String()
		cmds := []*exec.Cmd{startRedisWriter(b, srv.URL(), 2*i, events, env), startRedisWriter(b, srv.URL(), 2*i+1, events, env)}
		first := waitRedisWriter(b, events, -1, "acquired", 2*ttl+10*time.Second)
		waitRedisCommits(b, events, first.child, first.epoch, 3)
		// Let the lease run part of its TTL since the last renewal, as
		// a writer dying at a random moment would.
		time.Sleep(time.Duration(i%3) * ttl / 9)
		killed := time.Now()
		if err := cmds[first.child-2*i].Process.Kill(); err != nil {
			b.Fatal(err)
		}
		other := first.child ^ 1
		second := waitRedisWriter(b, events, other, "acquired", 2*ttl+10*time.Second)
		takeover += time.Since(killed)
		waitRedisCommits(b, events, other, second.epoch, 1)
		commit += time.Since(killed)
		for _, c := range cmds {
			_ = c.Process.Kill() // the standby; the writer is dead already
		}
	}
	b.ReportMetric(takeover.Seconds()/float64(b.N), "takeover-s")
	b.ReportMetric(commit.Seconds()/float64(b.N), "first-commit-s")
	b.ReportMetric(ttl.Seconds(), "ttl-s")
	b.ReportMetric(0, "ns/op")
}

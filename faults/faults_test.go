package faults

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cnsd/cnsd/store/redistest"
)

// repeat is n in the long form and short in the form CI runs.
func repeat(n, short int) int {
	if full {
		return n
	}
	return short
}

// churnRate is the cloud's changes per second in every scenario.
const churnRate = 20

// TestFaults runs every scenario; docs/faults.md says what each checks.
func TestFaults(t *testing.T) {
	scenario(t, "redis-kill", redisKill)
	scenario(t, "redis-data-lost", redisDataLost)
	scenario(t, "redis-hang", redisHang)
	scenario(t, "sentinel-failover", sentinelFailover)
	scenario(t, "writer-kill", writerKill)
	scenario(t, "redis-rollback", redisRollback)
	scenario(t, "changefeed-cut", changefeedCut)
	scenario(t, "cloud-errors", cloudErrors)
	scenario(t, "ufds-down", ufdsDown)
	scenario(t, "secondary-down", secondaryDown)
	scenario(t, "embedded-kill", embeddedKill)
	scenario(t, "disk-full", diskFull)
	scenario(t, "redis-disk-full", redisDiskFull)
	scenario(t, "redis-disk-full-always", redisDiskFullAlways)
}

// redisKill: the redis-server under one cnsd is SIGKILLed and comes back
// from its append-only file after longer than a client's usual timeouts,
// under churn.
func redisKill(t *testing.T) {
	e := newEnv(t, envOptions{redis: true})
	e.churn(churnRate)
	e.faultLoop(5, "redis-server killed", 7*time.Second, e.redis.Kill, e.redis.Restart)
}

// faultLoop, under the churn already started, waits 3 s, logs what,
// starts the fault, lets it last for down and ends it, repeat(n, 1)
// times; then waits 3 s more and runs the checks of the scenario's end.
func (e *env) faultLoop(n int, what string, down time.Duration, start, end func()) {
	for i := range repeat(n, 1) {
		time.Sleep(3 * time.Second)
		e.t.Logf("%s (%d) for %v", what, i+1, down)
		start()
		time.Sleep(down)
		end()
	}
	time.Sleep(3 * time.Second)
	e.finish()
}

// redisDataLost: two cnsd on a redis-server that keeps nothing on disk
// (appendonly no, no snapshots; the nodes are told to accept that), which
// is SIGKILLed under churn and comes back empty: every zone, serial,
// journal and the lease with its epoch counter are gone. The writer must
// write back what it published, at serials above them, and no two nodes
// may write with one epoch.
func redisDataLost(t *testing.T) {
	e := newEnv(t, envOptions{redis: true, nodes: 2, acceptNoAOF: true,
		redisOpts: []redistest.Option{redistest.WithArgs("--appendonly", "no", "--save", "")}})
	e.churn(churnRate)
	e.faultLoop(5, "redis-server killed, to start empty", 2*time.Second, e.redis.Kill, e.redis.Restart)
}

// redisHang: the redis-server two cnsd share stops answering (SIGSTOP:
// connections stay open, nothing comes back, as with a hung server or a
// partition that drops packets) under churn, longer than the writer
// lease's TTL, then goes on (SIGCONT). No cnsd may wait on it for ever.
func redisHang(t *testing.T) {
	e := newEnv(t, envOptions{redis: true, nodes: 2})
	e.churn(churnRate)
	e.faultLoop(3, "redis-server stopped", 8*time.Second, e.redis.Pause, e.redis.Resume)
}

// sentinelFailover: two cnsd on a Sentinel-managed master with one
// replica; the master is SIGKILLed under churn and Sentinel promotes the
// replica. In the long form the killed node is started again each time,
// as an operator would, and comes back as the master it was (with its
// old data) until Sentinel makes it a replica of the new master.
func sentinelFailover(t *testing.T) {
	e := newEnv(t, envOptions{sentinel: true, nodes: 2})
	e.churn(churnRate)
	for i := range repeat(3, 1) {
		time.Sleep(3 * time.Second)
		old := e.sentinel.Master()
		if old == nil {
			t.Fatal("the Sentinels name no master")
		}
		t.Logf("failover %d: master %s SIGKILLed", i+1, old.Addr())
		old.Kill()
		killed := time.Now()
		promoted := e.sentinel.AwaitFailover(t, old)
		t.Logf("replica %s promoted after %v", promoted.Addr(), time.Since(killed).Round(10*time.Millisecond))
		if full {
			old.Restart()
		}
	}
	time.Sleep(3 * time.Second)
	e.finish()
}

// writerKill: of two cnsd on one Redis, the writer is SIGKILLed (its
// lease is not released); the other takes over, and the killed one comes
// back as a follower.
func writerKill(t *testing.T) {
	e := newEnv(t, envOptions{redis: true, nodes: 2})
	e.churn(churnRate)
	for i := range repeat(3, 1) {
		time.Sleep(3 * time.Second)
		w := e.writerNode()
		t.Logf("kill %d: %s, the writer", i+1, w.name)
		w.kill()
		killed := time.Now()
		e.waitFor(30*time.Second, "another node to take over", func() string {
			for _, nd := range e.nodes {
				if nd != w && nd.alive() && nd.writer() {
					return ""
				}
			}
			return "no writer"
		})
		t.Logf("taken over after %v", time.Since(killed).Round(10*time.Millisecond))
		w.start()
	}
	time.Sleep(3 * time.Second)
	e.finish()
}

// redisRollback: of two cnsd on one Redis, the writer is SIGKILLed and
// Redis comes back from its files of a few seconds before (a restore, or
// a replica that was behind), under churn: the commits of those seconds
// are lost. The follower was stopped (SIGSTOP, a slow or cut-off host)
// while they were made, so only the secondaries hold some of them (BIND,
// whose primary is the writer; Knot, which asks the follower first and
// then the writer). The follower, let go, takes over knowing nothing of
// them: it must not reuse their serials with other records, and must
// find the secondaries ahead of zones that do not change and raise them
// past. The killed node is started again once the new writer's serials
// have passed every one it served and the secondaries hold (before that
// it would serve the older serials Redis came back with, a process that
// starts again knowing only the store, and BIND, whose primary it is,
// would log them as lower than its own, which the scenario's end counts
// as a failure).
func redisRollback(t *testing.T) {
	e := newEnv(t, envOptions{redis: true, nodes: 2})
	e.churn(churnRate)
	for i := range repeat(3, 1) {
		time.Sleep(3 * time.Second)
		w := e.writerNode()
		saved := t.TempDir()
		e.redis.Kill()
		if err := e.redis.SaveFiles(saved); err != nil {
			t.Fatal(err)
		}
		e.redis.Restart()
		var others []*node
		for _, nd := range e.nodes {
			if nd != w {
				nd.pause()
				others = append(others, nd)
			}
		}
		time.Sleep(3 * time.Second) // the commits to lose
		t.Logf("rollback %d: %s, the writer, killed; redis-server back from its files of 3 s before", i+1, w.name)
		w.kill()
		e.redis.Kill()
		if err := e.redis.RestoreFiles(saved); err != nil {
			t.Fatal(err)
		}
		e.redis.Restart()
		for _, nd := range others {
			nd.resume()
		}
		served := e.watch.servedBy(w.name)
		e.waitFor(60*time.Second, "another node to take over and pass the serials "+w.name+" served and the secondaries hold", func() string {
			for _, nd := range others {
				if !nd.alive() || !nd.writer() {
					continue
				}
				for zone, s := range served {
					got, ok := soaSerial(nd.dns, zone)
					if ok && serialLess(got, s) {
						return fmt.Sprintf("%s serves %s at %d, %s served %d", nd.name, zone, got, w.name, s)
					}
					for name, sec := range e.secondaries() {
						if held, hok := soaSerial(sec.Addr().String(), zone); ok && hok && serialLess(got, held) {
							return fmt.Sprintf("%s serves %s at %d, %s holds %d", nd.name, zone, got, name, held)
						}
					}
				}
				return ""
			}
			return "no writer"
		})
		w.start()
	}
	time.Sleep(3 * time.Second)
	e.finish()
}

// writerNode returns the node that writes, waiting for one.
func (e *env) writerNode() *node {
	e.t.Helper()
	var w *node
	e.waitFor(30*time.Second, "a writer", func() string {
		for _, nd := range e.nodes {
			if nd.alive() && nd.writer() {
				w = nd
				return ""
			}
		}
		return "no node writes"
	})
	return w
}

// changefeedCut: the cloud cuts every changefeed connection at random
// moments under churn; each reconnect re-lists.
func changefeedCut(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.churn(churnRate)
	rng := rand.New(rand.NewPCG(3, 5))
	for range repeat(50, 10) {
		time.Sleep(time.Duration(200+rng.IntN(800)) * time.Millisecond)
		e.cloud.DisconnectAll()
	}
	e.finish()
}

// secondaryDown: BIND is down for a while under churn and catches up when

// ufdsDown: UFDS (slapd) is stopped under churn, while accounts keep
// changing in the cloud, and started again on its files: cnsd must keep
// its accounts, follow the changelog again from where it was, and name
// the new VMs of accounts it could not look up once UFDS is back.
func ufdsDown(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.churn(churnRate)
	e.faultLoop(3, "slapd stopped", time.Duration(repeat(10, 5))*time.Second, e.ldap.Stop, e.ldap.Restart)
}

// cloudErrors: for a while, under churn, 30 % of the requests cnsd makes
// to the cloud's HTTP APIs (VMAPI's listing pages and VMs, CNAPI, NAPI)
// fail, half answered 503 and half cut off half-way through the body,
// and the changefeed is cut every 1–2 s so that cnsd lists again and
// again through the faults. A listing must be taken whole or not at all:
// one taken short would drop the VMs it missed.
func cloudErrors(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.churn(churnRate)
	time.Sleep(2 * time.Second)
	e.flaky.permille.Store(300)
	end := time.Now().Add(time.Duration(repeat(60, 8)) * time.Second)
	for time.Now().Before(end) {
		e.cloud.DisconnectAll()
		time.Sleep(time.Second + rand.N(time.Second))
	}
	e.flaky.permille.Store(0)
	t.Logf("cloud requests answered 503: %d, cut off: %d", e.flaky.refused.Load(), e.flaky.cut.Load())
	if e.flaky.refused.Load() == 0 || e.flaky.cut.Load() == 0 {
		t.Error("no request failed in some way: the scenario tested nothing")
	}
	e.finish()
}

// it is back.
func secondaryDown(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.churn(churnRate)
	time.Sleep(2 * time.Second)
	e.bind.Stop()
	down := time.Duration(repeat(120, 10)) * time.Second
	t.Logf("BIND down for %v", down)
	time.Sleep(down)
	e.bind.Restart(t)
	back := time.Now()
	e.waitFor(60*time.Second, "BIND to catch up", func() string {
		s, ok := soaSerial(e.nodes[0].dns, forwardZone)
		if b, bok := soaSerial(e.bind.Addr().String(), forwardZone); !ok || !bok || serialLess(b, s) {
			return fmt.Sprintf("BIND at %d, cnsd at %d", b, s)
		}
		return ""
	})
	t.Logf("BIND caught up on %s %v after it was back", forwardZone, time.Since(back).Round(10*time.Millisecond))
	e.finish()
}

// embeddedKill: cnsd on the embedded store is SIGKILLed under churn and
// started again at once.
func embeddedKill(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.churn(churnRate)
	nd := e.nodes[0]
	for i := range repeat(5, 1) {
		time.Sleep(3 * time.Second)
		t.Logf("kill %d", i+1)
		nd.kill()
		nd.start()
	}
	time.Sleep(3 * time.Second)
	e.finish()
}

// diskFull: the embedded store's file system fills up under churn for a
// while, then space is freed.
func diskFull(t *testing.T) {
	dir := smallFileSystem(t)
	e := newEnv(t, envOptions{storeDir: dir})
	e.churn(churnRate)
	time.Sleep(2 * time.Second)
	e.fillFor(dir, e.nodes[0])
	e.finish()
}

// redisDiskFull: the file system under the append-only file of the
// redis-server two cnsd share fills up under churn for a while, then
// space is freed. With appendfsync everysec (which the operator guide
// allows) Redis then refuses every write (MISCONF) and goes on reading:
// the writer's commits and its lease's renewals fail, the follower
// cannot take the lease either.
func redisDiskFull(t *testing.T) {
	dir := smallFileSystem(t)
	e := newEnv(t, envOptions{redis: true, nodes: 2,
		redisOpts: []redistest.Option{redistest.InDir(dir), redistest.WithArgs("--appendfsync", "everysec")}})
	e.churn(churnRate)
	time.Sleep(2 * time.Second)
	e.fillFor(dir, e.writerNode())
	e.finish()
}

// redisDiskFullAlways: redisDiskFull with appendfsync always, where
// redis-server exits when it cannot write its append-only file, before
// answering the write it could not keep. A supervisor starts it again
// (as systemd's Restart= would) whenever it is down; while the disk is
// full it exits again at its first write.
func redisDiskFullAlways(t *testing.T) {
	dir := smallFileSystem(t)
	e := newEnv(t, envOptions{redis: true, nodes: 2, redisOpts: []redistest.Option{redistest.InDir(dir)}})
	e.superviseRedis()
	e.churn(churnRate)
	time.Sleep(2 * time.Second)
	e.fillFor(dir, e.writerNode())
	e.finish()
}

// superviseRedis starts the redis-server again whenever it is found down
// (every 200 ms) until the test ends, and logs how often it did.
func (e *env) superviseRedis() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	restarts := 0
	go func() {
		defer close(done)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if !e.redis.Running() {
				restarts++
				if err := e.redis.TryRestart(); err != nil {
					e.t.Logf("supervisor: redis-server does not start again: %v", err)
				}
			}
		}
	}()
	e.t.Cleanup(func() {
		cancel()
		<-done
		e.t.Logf("supervisor: redis-server started again %d times", restarts)
	})
}

// smallFileSystem mounts a 64 MB tmpfs for the rest of the test.
func smallFileSystem(t *testing.T) string {
	if os.Geteuid() != 0 {
		t.Fatal("the disk-full scenarios mount a small tmpfs and need root: run the suite as root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount tmpfs on %s: %v: %s", dir, err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
	return dir
}

// fillFor fills the file system of dir, waits until nd's GET /ready
// says its commits fail, keeps it full (8 s, a minute in the long form)
// and frees the space.
func (e *env) fillFor(dir string, nd *node) {
	e.t.Helper()
	filler := filepath.Join(dir, "filler")
	if err := fill(filler); err != nil {
		e.t.Fatal(err)
	}
	full := time.Duration(repeat(60, 8)) * time.Second
	e.t.Logf("%s full for %v", dir, full)
	filled := time.Now()
	e.waitFor(30*time.Second, "GET /ready of "+nd.name+" to say commits fail", func() string {
		body, err := nd.get("/ready")
		if err == nil || !strings.Contains(body, "commits fail") {
			return fmt.Sprintf("GET /ready: %v %s", err, body)
		}
		return ""
	})
	time.Sleep(time.Until(filled.Add(full)))
	if err := os.Remove(filler); err != nil {
		e.t.Fatal(err)
	}
}

// fill writes path until the file system has no space left.
func fill(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	for {
		if _, err := f.Write(buf); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return nil
			}
			return err
		}
	}
}

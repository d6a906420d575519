package knotbench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cnsd/cnsd/schema"
	"github.com/cnsd/cnsd/store"
	"github.com/cnsd/cnsd/xfr"
)

// childEnv, set to the number of records, makes a process started by
// StartCnsd serve the zone instead of running tests (see ChildMain).
const childEnv = "CNSD_KNOTBENCH_CNSD_RECORDS"

// ProfileEnv names a file the cnsd child writes its CPU profile to, from
// the moment the zone is loaded until it stops: where its time goes.
const ProfileEnv = "CNSD_KNOTBENCH_CPUPROFILE"

// childConfig is the cnsd configuration of the child: one forward zone,
// no secondaries (so no NOTIFY traffic during the measurements), the
// benchmark's loopback client allowed to transfer, and loopback exempt
// from response rate limiting: the load comes from one client, and Knot
// and NSD run without their own (xfr's BenchmarkQuery and
// BenchmarkRateLimit measure its cost).
const childConfig = `{
  "my_name": "ns1.bench.test",
  "hostmaster": "hostmaster@bench.test",
  "forward_zones": {"cns.bench.test": {"networks": ["*"]}},
  "allow_transfer": ["127.0.0.1"],
  "rrl": {"exempt": ["127.0.0.0/8"]},
  "ttl": {"record": 30, "ns": 3600, "soa_minimum": 60}
}`

// StartCnsd starts this program again as a child that serves the zone of
// n records with xfr.Server on sockets bound here (127.0.0.1, a port
// each for UDP and TCP), and waits until the zone is in its store. The
// program's TestMain (or main) must call ChildMain first thing.
func StartCnsd(n int) (*Server, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("start cnsd: %w", err)
	}
	s := &Server{Name: "cnsd"}
	files, err := bindLoopback(s)
	if err != nil {
		return nil, fmt.Errorf("start cnsd: %w", err)
	}
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), childEnv+"="+strconv.Itoa(n))
	cmd.ExtraFiles = files // fd 3 TCP, fds 4 on UDP
	cmd.Stderr = os.Stderr
	// The child serves until its stdin closes: when Stop ends it, or
	// when this process dies without cleaning up. Until then stdin
	// carries its commands (Change).
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("start cnsd: %w", err)
	}
	s.ctl = in
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("start cnsd: %w", err)
	}
	if err := s.start(cmd); err != nil {
		return nil, err
	}
	s.lines = make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
		close(s.lines)
	}()
	if err := waitLine(s.lines, "ready", 10*time.Minute); err != nil {
		s.Stop()
		return nil, fmt.Errorf("start cnsd: %w", err)
	}
	return s, nil
}

// bindLoopback binds a TCP socket and GOMAXPROCS UDP sockets sharing a
// port (xfr.ListenUDP, as cnsd binds its own: a worker each) on
// 127.0.0.1 for s, and returns them as files for the child, TCP first;
// the caller closes them. The child inherits GOMAXPROCS (from the
// machine or the environment), so it has as many workers as sockets.
func bindLoopback(s *Server) (files []*os.File, err error) {
	defer func() {
		if err != nil {
			for _, f := range files {
				f.Close()
			}
		}
	}()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	defer l.Close()
	tcp, err := l.(*net.TCPListener).File()
	if err != nil {
		return nil, err
	}
	files = append(files, tcp)
	pcs, err := xfr.ListenUDP(context.Background(), "127.0.0.1:0", runtime.GOMAXPROCS(0))
	if err != nil {
		return files, err
	}
	for _, pc := range pcs {
		defer pc.Close()
		f, err := pc.(*net.UDPConn).File()
		if err != nil {
			return files, err
		}
		files = append(files, f)
	}
	s.UDP, s.TCP = pcs[0].LocalAddr().String(), l.Addr().String()
	return files, nil
}

// waitLine reads lines until one equal to want.
func waitLine(lines <-chan string, want string, timeout time.Duration) error {
	deadline := time.After(timeout)
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				return fmt.Errorf("child exited before %q", want)
			}
			if line == want {
				return nil
			}
		case <-deadline:
			return fmt.Errorf("no %q within %v", want, timeout)
		}
	}
}

// ChildMain serves the zone and exits when this process was started by
// StartCnsd, and returns at once otherwise.
func ChildMain() {
	v := os.Getenv(childEnv)
	if v == "" {
		return
	}
	if err := serveChild(v); err != nil {
		fmt.Fprintln(os.Stderr, "knotbench cnsd child:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func serveChild(records string) error {
	n, err := strconv.Atoi(records)
	if err != nil {
		return fmt.Errorf("%s: %w", childEnv, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	var served atomic.Pointer[store.Store]
	go func() {
		commands(ctx, os.Stdin, &served)
		cancel()
	}()
	pcs, l, err := childSockets()
	if err != nil {
		return err
	}
	cfg, err := schema.Parse([]byte(childConfig))
	if err != nil {
		return err
	}
	src, err := fill(ctx, n)
	if err != nil {
		return err
	}
	served.Store(src)
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	srv := xfr.New(cfg, src, xfr.Options{PacketConns: pcs, Listeners: []net.Listener{l}}, log)
	if path := os.Getenv(ProfileEnv); path != "" {
		stopProfile, err := startProfile(path)
		if err != nil {
			return err
		}
		defer stopProfile()
	}
	fmt.Println("ready")
	if err := srv.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// commands runs the parent's commands, a line each on r, until r ends:
// "change <first> <k>" commits k serials, the i-th adding
// ChangeRecord(first+i) as a source of its own; "churn <first> <k>"
// commits k serials, the i-th giving ChangeRecord(first+i) to one of
// churnSources sources in turn, in place of the one it had. Each answers
// "changed". The parent sends them only after "ready", when src holds
// the zone.
func commands(ctx context.Context, r io.Reader, src *atomic.Pointer[store.Store]) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		var verb string
		var first, k int
		if _, err := fmt.Sscanf(sc.Text(), "%s %d %d", &verb, &first, &k); err != nil || src.Load() == nil ||
			(verb != "change" && verb != "churn") {
			fmt.Fprintln(os.Stderr, "knotbench cnsd child: bad command", sc.Text())
			continue
		}
		for i := first; i < first+k; i++ {
			source := fmt.Sprint("change", i)
			if verb == "churn" {
				source = fmt.Sprint("churn", i%churnSources)
			}
			recs := map[string][]store.Record{Zone: {ChangeRecord(i)}}
			if _, err := src.Load().CommitSource(ctx, source, recs); err != nil {
				fmt.Fprintln(os.Stderr, "knotbench cnsd child: commit:", err)
			}
		}
		fmt.Println("changed")
	}
}

// childSockets are the sockets StartCnsd passed: TCP as fd 3, then as
// many UDP sockets as the child has GOMAXPROCS (the parent's).
func childSockets() ([]net.PacketConn, net.Listener, error) {
	l, err := net.FileListener(os.NewFile(3, "tcp"))
	if err != nil {
		return nil, nil, fmt.Errorf("tcp socket from parent: %w", err)
	}
	var pcs []net.PacketConn
	for i := range runtime.GOMAXPROCS(0) {
		pc, err := net.FilePacketConn(os.NewFile(uintptr(4+i), "udp"))
		if err != nil {
			return nil, nil, fmt.Errorf("udp socket %d from parent: %w", i, err)
		}
		pcs = append(pcs, pc)
	}
	return pcs, l, nil
}

// fill returns a memory store holding the zone of n records, committed
// as one source.
func fill(ctx context.Context, n int) (*store.Store, error) {
	src, err := store.Open(ctx, store.NewMemory(), store.Options{}, nil)
	if err != nil {
		return nil, err
	}
	recs := make([]store.Record, 0, n)
	for r := range Records(n) {
		recs = append(recs, r)
	}
	if _, err := src.CommitSource(ctx, "knotbench", map[string][]store.Record{Zone: recs}); err != nil {
		return nil, err
	}
	return src, nil
}

func startProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

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
	cmd.ExtraFiles = files // fds 3 (UDP) and 4 (TCP)
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

// bindLoopback binds a UDP and a TCP socket on 127.0.0.1 for s and
// returns them as files for the child; the caller closes them.
func bindLoopback(s *Server) ([]*os.File, error) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	defer pc.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	defer l.Close()
	udp, err := pc.(*net.UDPConn).File()
	if err != nil {
		return nil, err
	}
	tcp, err := l.(*net.TCPListener).File()
	if err != nil {
		udp.Close()
		return nil, err
	}
	s.UDP, s.TCP = pc.LocalAddr().String(), l.Addr().String()
	return []*os.File{udp, tcp}, nil
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
	pc, l, err := childSockets()
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
	srv := xfr.New(cfg, src, xfr.Options{PacketConns: []net.PacketConn{pc}, Listeners: []net.Listener{l}}, log)
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
// ChangeRecord(first+i), and answers "changed". The parent sends them
// only after "ready", when src holds the zone.
func commands(ctx context.Context, r io.Reader, src *atomic.Pointer[store.Store]) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		var first, k int
		if _, err := fmt.Sscanf(sc.Text(), "change %d %d", &first, &k); err != nil || src.Load() == nil {
			fmt.Fprintln(os.Stderr, "knotbench cnsd child: bad command", sc.Text())
			continue
		}
		for i := first; i < first+k; i++ {
			recs := map[string][]store.Record{Zone: {ChangeRecord(i)}}
			if _, err := src.Load().CommitSource(ctx, fmt.Sprint("change", i), recs); err != nil {
				fmt.Fprintln(os.Stderr, "knotbench cnsd child: commit:", err)
			}
		}
		fmt.Println("changed")
	}
}

// childSockets are the sockets StartCnsd passed as fds 3 and 4.
func childSockets() (net.PacketConn, net.Listener, error) {
	pc, err := net.FilePacketConn(os.NewFile(3, "udp"))
	if err != nil {
		return nil, nil, fmt.Errorf("udp socket from parent: %w", err)
	}
	l, err := net.FileListener(os.NewFile(4, "tcp"))
	if err != nil {
		return nil, nil, fmt.Errorf("tcp socket from parent: %w", err)
	}
	return pc, l, nil
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

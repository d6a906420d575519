package subproc

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServerDiesWithStarter: a starter killed with SIGKILL, which runs no
// cleanup, takes the server it started with it.
func TestServerDiesWithStarter(t *testing.T) {
	if os.Getenv("SUBPROC_STARTER") == "1" {
		starter()
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestServerDiesWithStarter$")
	cmd.Env = append(os.Environ(), "SUBPROC_STARTER=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the server's pid from the starter: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "server ")))
	if err != nil {
		t.Fatalf("starter said %q", line)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("server %d still runs 10 s after its starter was killed", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// starter is the child side: it starts a long sleep as its server, says
// its pid, and waits to be killed.
func starter() {
	server := exec.Command("sleep", "60")
	server.SysProcAttr = Attr()
	if err := server.Start(); err != nil {
		fmt.Println("cannot start:", err)
		os.Exit(1)
	}
	fmt.Printf("server %d\n", server.Process.Pid)
	_ = server.Wait()
}

// alive reports whether pid runs and is not a zombie: the killed server
// is reparented, and its new parent may reap it late.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}

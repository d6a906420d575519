package main

import (
	"fmt"
	"os"
	"os/exec"
)

// tools says which programs of the printed lines are installed besides
// cnsadm, which the demo builds: a line is printed only when its program
// is there, so that every printed line works as printed.
type tools struct {
	dig, curl bool
}

func available() tools {
	_, dig := exec.LookPath("dig")
	_, curl := exec.LookPath("curl")
	return tools{dig: dig == nil, curl: curl == nil}
}

// missing says which lines were left out and what to install for them.
func (t tools) missing() []string {
	sudo := "sudo "
	if os.Geteuid() == 0 {
		sudo = ""
	}
	var out []string
	for _, m := range []struct {
		have            bool
		prog, pkg, what string
	}{
		{t.dig, "dig", "bind9-dnsutils", "DNS queries"},
		{t.curl, "curl", "curl", "API calls"},
	} {
		if !m.have {
			out = append(out, fmt.Sprintf("(%s is not installed, so the lines with %s are left out; %sapt-get install %s adds it)",
				m.prog, m.what, sudo, m.pkg))
		}
	}
	return out
}

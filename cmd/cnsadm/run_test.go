package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantErrStr string // "" : run must succeed
		wantOut    []string
	}{
		{name: "help", args: []string{"-help"}, wantOut: []string{
			"-api URL", "http://127.0.0.1:8080", "-version", "-config FILE", "-j",
			"status", "vm UUID", "zones", "config", "peers", "upgrade", "confirm", "preview", "bind-config",
		}},
		{name: "help double dash", args: []string{"--help"}, wantOut: []string{"-api URL", "-version"}},
		{name: "version", args: []string{"-version"}, wantOut: []string{"cnsadm dev go1."}},
		{name: "no command", args: nil, wantErrStr: "no command given"},
		{name: "unknown command", args: []string{"frob"}, wantErrStr: `unknown command "frob"`},
		{name: "unknown flag", args: []string{"-bogus"}, wantErrStr: "flag provided but not defined: -bogus"},
		{name: "help of a command", args: []string{"help", "zones"}, wantOut: []string{"NAME", "SYNOPSIS", "DESCRIPTION", "EXAMPLES", "peers+="}},
		{name: "command -help", args: []string{"status", "-help"}, wantOut: []string{"NAME\n    cnsadm status"}},
		{name: "help of nothing known", args: []string{"help", "frob"}, wantErrStr: `unknown command "frob"`},
		{name: "vm without uuid", args: []string{"vm"}, wantErrStr: "wrong number of arguments"},
		{name: "unreachable API", args: []string{"-api", "http://127.0.0.1:1", "status"}, wantErrStr: "cnsd API at http://127.0.0.1:1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), tt.args, &stdout, &stderr)
			switch {
			case tt.wantErrStr != "":
				if err == nil || !strings.Contains(err.Error(), tt.wantErrStr) {
					t.Fatalf("run(%q) = %v, want an error containing %q", tt.args, err, tt.wantErrStr)
				}
			case err != nil:
				t.Fatalf("run(%q) = %v, want nil", tt.args, err)
			}
			for _, want := range tt.wantOut {
				if !strings.Contains(stdout.String(), want) {
					t.Errorf("run(%q) stdout lacks %q:\n%s", tt.args, want, stdout.String())
				}
			}
		})
	}
}

// TestEveryCommandHasAManual: cnsadm help COMMAND reads like a man page
// for every command.
func TestEveryCommandHasAManual(t *testing.T) {
	for _, c := range commands {
		if strings.TrimSpace(manual[c.name]) == "" {
			t.Errorf("command %s has no manual page", c.name)
		}
	}
}

package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantErr    error  // nil: run must succeed
		wantErrStr string // substring of a non-sentinel error
		wantOut    []string
	}{
		{name: "help", args: []string{"-help"}, wantOut: []string{"-config FILE", "-version", "usage: cnsd"}},
		{name: "help double dash", args: []string{"--help"}, wantOut: []string{"-config FILE", "-version"}},
		{name: "h", args: []string{"-h"}, wantOut: []string{"-config FILE"}},
		{name: "version", args: []string{"-version"}, wantOut: []string{"cnsd dev go1."}},
		{name: "no config", args: nil, wantErrStr: "-config FILE is required"},
		{name: "missing config", args: []string{"-config", "/nonexistent/cnsd.json"}, wantErrStr: "/nonexistent/cnsd.json"},
		{name: "unknown flag", args: []string{"-bogus"}, wantErrStr: "flag provided but not defined: -bogus"},
		{name: "bad log level", args: []string{"-log-level", "verbose", "-config", "/nonexistent/cnsd.json"},
			wantErrStr: `invalid value "verbose" for flag -log-level: log level "verbose": must be one of debug, info, warn, error`},
		{name: "help names -log-level", args: []string{"-help"}, wantOut: []string{"-log-level LEVEL"}},
		{name: "extra argument", args: []string{"serve"}, wantErrStr: `unexpected argument "serve"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), tt.args, &stdout, &stderr)
			switch {
			case tt.wantErr != nil:
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("run(%q) = %v, want %v", tt.args, err, tt.wantErr)
				}
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
			if stderr.Len() != 0 {
				t.Errorf("run(%q) wrote to stderr:\n%s", tt.args, stderr.String())
			}
		})
	}
}

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestRunFlagErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "no source", args: nil, want: "one of -fixture or -generate is required"},
		{name: "both sources", args: []string{"-fixture", "x.json", "-generate", "1,1,1"}, want: "exclude each other"},
		{name: "bad sizes", args: []string{"-generate", "1,2"}, want: "want N,M,K"},
		{name: "negative size", args: []string{"-generate", "1,-2,3"}, want: "is not a count"},
		{name: "missing fixture", args: []string{"-fixture", "/nonexistent.json"}, want: "no such file"},
		{name: "unknown flag", args: []string{"-bogus"}, want: "flag provided but not defined"},
		{name: "ufds on the http port", args: []string{"-generate", "1,1,1", "-listen", "127.0.0.1:8089", "-ufds", "127.0.0.1:8089"}, want: "name the same port"},
		{name: "bad churn", args: []string{"-generate", "1,1,1", "-churn", "-1", "-listen", "127.0.0.1:0"}, want: "must be 0 or more"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := run(context.Background(), tt.args, io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("run(%q) = %v, want an error containing %q", tt.args, err, tt.want)
			}
		})
	}
}

// TestRunServes starts the command on a free port, reads the URL it
// prints, lists the VMs and stops it by cancelling the context.
func TestRunServes(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-listen", "127.0.0.1:0", "-generate", "10,3,2", "-churn", "50"}, pw, io.Discard)
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	var vmapi string
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 2 && f[0] == "VMAPI" {
			vmapi = f[1]
			break
		}
	}
	if vmapi == "" {
		t.Fatalf("no VMAPI URL printed (%v)", <-done)
	}
	go io.Copy(io.Discard, pr)
	resp, err := http.Get(vmapi + "?state=active")
	if err != nil {
		t.Fatal(err)
	}
	var vms []map[string]any
	err = json.NewDecoder(resp.Body).Decode(&vms)
	resp.Body.Close()
	if err != nil || len(vms) == 0 {
		t.Fatalf("GET %s: %d VMs, %v", vmapi, len(vms), err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("run after cancel: %v", err)
	}
}

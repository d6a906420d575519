// Command cnsd is the container naming service daemon: it follows a
// Triton-style cloud's APIs, turns instances and services into DNS records,
// and serves them as an authoritative (normally hidden) primary to BIND or
// Knot secondaries.
//
// This package is wiring only: configuration, then the components (feed,
// store, xfr, api), then one errgroup that runs them until a signal arrives.
// The work lives in those packages; main only sets the exit code.
package main

import (
	"context"
	"fmt"
	"os"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "cnsd:", err)
		os.Exit(1)
	}
}

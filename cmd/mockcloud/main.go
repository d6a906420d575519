// Command mockcloud runs a simulated Triton cloud (VMAPI with its
// changefeed, CNAPI, NAPI, and the /_mock/ admin API) for demos and for
// running cnsd by hand (`make run`). See docs/mockcloud.md.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "mockcloud:", err)
		stop()
		os.Exit(1)
	}
}

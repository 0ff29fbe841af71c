// Command modulectl publishes Kyma modules for the lifecycle manager: it
// pushes a module's manifests or Helm chart to an OCI registry as an OCM
// component version and writes the ModuleTemplate and ModuleReleaseMeta
// that make it available; it verifies a published module the way the
// operator will install it. Run `modulectl --help`.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/term"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], streams{
		in: os.Stdin, out: os.Stdout, err: os.Stderr,
		errIsTerminal: term.IsTerminal(int(os.Stderr.Fd())),
	})
	stop()
	os.Exit(code)
}

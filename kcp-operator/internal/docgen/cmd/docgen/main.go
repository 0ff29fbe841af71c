// Command docgen writes docs/reference/ from the operator's code; `make
// docs` runs it. It starts an API server (envtest's kube-apiserver and
// etcd, found as the tests find them) to assemble the operator and list
// its metrics.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"

	"github.com/lifecycle-manager/kcp-operator/internal/docgen"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "docgen:", err)
		os.Exit(1)
	}
}

func run() error {
	module := flag.String("module", ".", "folder of the kcp-operator module")
	out := flag.String("out", "../docs/reference", "folder the pages are written to")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	kcp, err := docgen.StartKCP()
	if err != nil {
		return err
	}
	pages, err := docgen.Pages(ctx, *module, kcp.Config)
	if stopErr := kcp.Stop(); err == nil && stopErr != nil {
		err = fmt.Errorf("stopping the API server: %w", stopErr)
	}
	if err != nil {
		return err
	}
	if err := docgen.Write(*out, pages); err != nil {
		return err
	}
	fmt.Printf("wrote %d pages to %s\n", len(pages), *out)
	return nil
}

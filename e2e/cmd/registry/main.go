// Command registry serves go-containerregistry's in-memory OCI registry
// over plain HTTP until it is stopped: the module registry of
// `make e2e-node`, where the operator runs in a pod and reaches the
// registry on the host's address. What it holds is lost when it stops.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:5050", "host:port to listen on")
	verbose := flag.Bool("v", false, "log every request")
	flag.Parse()
	if err := run(*addr, *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "registry:", err)
		os.Exit(1)
	}
}

func run(addr string, verbose bool) error {
	logger := log.New(io.Discard, "", 0)
	if verbose {
		logger = log.New(os.Stderr, "registry: ", log.LstdFlags)
	}
	srv := &http.Server{Addr: addr, Handler: registry.New(registry.Logger(logger)), ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	errs := make(chan error, 1)
	go func() { errs <- srv.ListenAndServe() }()
	fmt.Fprintln(os.Stderr, "registry: serving on", addr)
	select {
	case err := <-errs:
		return fmt.Errorf("serving on %s: %w", addr, err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("stopping: %w", err)
	}
	return nil
}

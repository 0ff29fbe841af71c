// Command skr-agent is the admission webhook in every runtime that forwards
// change events to the KCP listener. See the module README for its flags,
// environment variables and metrics.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/lifecycle-manager/skr-agent/internal/agent"
	"github.com/lifecycle-manager/skr-agent/internal/config"
	"github.com/lifecycle-manager/skr-agent/internal/logging"
)

func main() {
	os.Exit(run())
}

func run() int {
	cfg, err := config.Load(os.Args[1:], os.LookupEnv, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "skr-agent: %v\n", err)
		return 2
	}
	log, err := logging.New(cfg.LogLevel, os.Stderr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "skr-agent: %v\n", err)
		return 2
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	a, err := agent.New(ctx, cfg, reg, reg, log)
	if err != nil {
		log.Error(err, "cannot start")
		return 1
	}
	if err := a.Run(ctx); err != nil {
		log.Error(err, "stopped with an error")
		return 1
	}
	return 0
}

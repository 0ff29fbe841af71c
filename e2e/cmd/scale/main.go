// Command scale is `make scale`: it measures the operator at scale on this
// machine (see docs/performance.md) and writes report.json, report.txt and
// PNG plots into --out.
//
// `scale pairs RUN-FOLDER...` is the end of `make scale-runs`: it compares
// runs, one row per run folder (its report.json) with the convergence
// against its own full bound, and the median that decides the targets on
// a machine whose speed drifts between runs.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/lifecycle-manager/e2e/scale/fleet"
	"github.com/lifecycle-manager/e2e/scale/report"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "pairs" {
		if err := pairs(os.Stdout, os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "scale pairs:", err)
			os.Exit(1)
		}
		return
	}
	opts, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		os.Exit(2)
	}
	if err := run(opts); err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		os.Exit(1)
	}
}

// pairs writes the comparison of the runs in dirs.
func pairs(w io.Writer, dirs []string) error {
	if len(dirs) == 0 {
		return errors.New("usage: scale pairs RUN-FOLDER... (each holding a report.json of make scale)")
	}
	ps, err := report.LoadPairs(dirs)
	if err != nil {
		return err
	}
	return report.WritePairs(w, ps)
}

func parseFlags(args []string) (fleet.Options, error) {
	var o fleet.Options
	var operatorArgs string
	fs := flag.NewFlagSet("scale", flag.ContinueOnError)
	fs.Usage = func() {
		_, _ = fmt.Fprintln(fs.Output(), "usage: scale [flags]  (a run)\n       scale pairs RUN-FOLDER...  (compare runs of make scale-runs)")
		fs.PrintDefaults()
	}
	fs.IntVar(&o.Kymas, "kymas", 1000, "Kymas (runtimes) to manage")
	fs.IntVar(&o.Modules, "modules", 5, "modules per Kyma")
	fs.IntVar(&o.RuntimeServers, "runtime-servers", 0, "runtime API servers the runtimes share (0: kymas/1000+1, 2 to 7)")
	fs.IntVar(&o.PushRuntimes, "push-runtimes", 20, "runtimes with a real skr-agent, where the push edits are made")
	fs.IntVar(&o.PublicPushRuntimes, "public-push-runtimes", 10, "further runtimes whose skr-agent sends the public runtime-watcher body (no pre-write version); idle edits there are measured apart")
	fs.IntVar(&o.PushEdits, "push-edits", 200, "runtime edits measured, idle and again during the release")
	fs.Float64Var(&o.EditRate, "edit-rate", 4, "runtime edits per second")
	fs.DurationVar(&o.Idle, "idle", 5*time.Minute, "quiet window with everything Ready")
	fs.BoolVar(&o.ResyncWave, "resync-wave", true, "force one reconcile of every object and spread its cost over --resync-interval")
	fs.DurationVar(&o.ResyncInterval, "resync-interval", 2*time.Hour, "the operator's --requeue-success (its default)")
	fs.BoolVar(&o.Release, "release", true, "release a new version of one module to every Kyma, at --release-rate")
	fs.Float64Var(&o.ReleaseRate, "release-rate", 5, "the operator's --fan-out-rate: Kymas per second, at most, the release reaches (0: no limit)")
	fs.BoolVar(&o.ReleasePushOnly, "release-push-only", false, "end the release phase once the push edits during it are measured, without waiting for every Kyma to run the new version")
	fs.IntVar(&o.BoundWorkers, "bound-workers", 32, "concurrency of the bare-client bound; 0 skips it")
	fs.BoolVar(&o.OnlyFullBound, "only-full-bound", false, "measure only the full bound (KCP and runtime writes), not the KCP-only one")
	fs.BoolVar(&o.BoundApply, "bound-apply", false, "the bounds write with server-side apply, as the operator does, instead of create and update")
	fs.BoolVar(&o.BoundOnly, "bound-only", false, "measure only the bounds: stop the operator once a first Kyma is Ready (the bounds' model) and skip the other phases")
	fs.DurationVar(&o.ReadyTimeout, "ready-timeout", 3*time.Hour, "longest wait for every Kyma to be Ready")
	fs.IntVar(&o.ProfileSeconds, "profile-seconds", 0, "save CPU profiles of the operator, the KCP API server and a runtime API server (this many seconds) at the start of the convergence, of the full bound, of the resync wave and of the release into --out")
	fs.DurationVar(&o.ProfileConvergenceAfter, "profile-convergence-after", 0, "start the convergence profile this long after the operator, the full bound's this long after the bound")
	fs.IntVar(&o.Shards, "shards", 0, "operator instances, --shard=s0 to s<n-1> (0 or 1: one unsharded); a sharded run measures the convergence, the bound and the idle window: the phases and agents it does not measure default to off")
	fs.StringVar(&operatorArgs, "operator-args", "", "more operator flags, space separated (tuning experiments)")
	fs.StringVar(&o.RunDir, "run-dir", filepath.Join(".run", "scale"), "folder for binaries, kubeconfigs and logs (recreated)")
	fs.StringVar(&o.OutDir, "out", filepath.Join(".run", "scale-report"), "folder for the report and the plots")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	o.OperatorArgs = strings.Fields(operatorArgs)
	if o.Shards > 1 {
		singleOnlyOff(fs, &o)
	}
	return o, nil
}

// singleOnlyOff turns off what a sharded run does not measure, unless it
// was asked for (then Validate says why not).
func singleOnlyOff(fs *flag.FlagSet, o *fleet.Options) {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	off := map[string]func(){
		"push-runtimes": func() { o.PushRuntimes = 0 }, "public-push-runtimes": func() { o.PublicPushRuntimes = 0 },
		"push-edits": func() { o.PushEdits = 0 }, "release": func() { o.Release = false },
		"resync-wave": func() { o.ResyncWave = false },
	}
	for name, turnOff := range off {
		if !set[name] {
			turnOff()
		}
	}
}

func say(format string, args ...any) {
	fmt.Printf("%s  %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func run(o fleet.Options) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	if o.RunDir, err = filepath.Abs(o.RunDir); err != nil {
		return err
	}
	if err := os.RemoveAll(o.RunDir); err != nil {
		return fmt.Errorf("clearing the run folder: %w", err)
	}
	if err := os.MkdirAll(o.OutDir, 0o755); err != nil {
		return fmt.Errorf("creating the report folder: %w", err)
	}
	if err := clearOutputs(o.OutDir); err != nil {
		return err
	}
	o.Progress = say
	o.Checkpoint = func(rep *report.Report) error { return writeReport(rep, o.OutDir) }
	crlog.SetLogger(logr.Discard()) // the harness reports through say
	rep, runErr := fleet.Run(ctx, o)
	if rep == nil {
		return runErr
	}
	if err := writeReport(rep, o.OutDir); err != nil {
		return err
	}
	fmt.Println()
	if err := rep.WriteTable(os.Stdout); err != nil {
		return err
	}
	say("report and plots in %s; logs in %s", o.OutDir, filepath.Join(o.RunDir, "logs"))
	return runErr
}

// outputs are the files a run writes into --out. An earlier run's that
// this one does not write again (a profile, a plot of a phase) would sit
// beside the new report as if they were its own.
var outputs = []string{"report.json", "report.txt", "*.png", "*.pprof"}

// clearOutputs removes an earlier run's outputs from dir, and nothing
// else: --out may name a folder that holds other files.
func clearOutputs(dir string) error {
	for _, pattern := range outputs {
		paths, err := filepath.Glob(filepath.Join(dir, pattern))
		if err != nil {
			return fmt.Errorf("finding the earlier outputs: %w", err)
		}
		for _, p := range paths {
			if err := os.Remove(p); err != nil {
				return fmt.Errorf("removing the earlier run's %s: %w", p, err)
			}
		}
	}
	return nil
}

// writeReport writes report.json and report.txt into dir.
func writeReport(rep *report.Report, dir string) error {
	if err := rep.WriteJSON(filepath.Join(dir, "report.json")); err != nil {
		return err
	}
	table, err := os.Create(filepath.Join(dir, "report.txt"))
	if err != nil {
		return fmt.Errorf("writing the table: %w", err)
	}
	if err := rep.WriteTable(table); err != nil {
		_ = table.Close()
		return err
	}
	if err := table.Close(); err != nil {
		return fmt.Errorf("writing the table: %w", err)
	}
	return nil
}

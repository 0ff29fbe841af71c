package certmanagertest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// startedLine is what the controllers log once every controller runs.
const startedLine = "cert-manager controllers started"

// Binary returns the cert-manager controllers' binary, built by
// hack/cert-manager.sh on first use and cached by version afterwards.
func Binary(ctx context.Context) (string, error) {
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(file), "..", "..", "hack", "cert-manager.sh")
	cmd := exec.CommandContext(ctx, script)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("building the cert-manager %s controllers with %s: %w\n%s", Version, script, err, stderr.String())
	}
	return strings.TrimSpace(string(out)), nil
}

// Options say where and how the controllers run.
type Options struct {
	// Kubeconfig reaches the API server, as testenv.Env.Kubeconfig returns it.
	Kubeconfig []byte
	// Dir holds the kubeconfig file and the log (controllers.log).
	Dir string
	// Namespace limits the controllers to one namespace; empty is all.
	Namespace string
	// ClusterResourceNamespace holds the ClusterIssuers' CA Secrets
	// (cert-manager's default kube-system when empty).
	ClusterResourceNamespace string
	// Verbosity is cert-manager's log level (klog -v).
	Verbosity int
}

// Controllers is a running cert-manager controllers process.
type Controllers struct {
	cmd  *exec.Cmd
	done chan struct{}
	// Log is the file with the process's output.
	Log string
}

// Start builds (see Binary) and starts the controllers, and returns once
// they run; ctx bounds the build and the start only, the process runs until
// Stop (or until the test binary dies).
func Start(ctx context.Context, opts Options) (*Controllers, error) {
	bin, err := Binary(ctx)
	if err != nil {
		return nil, err
	}
	kubeconfig := filepath.Join(opts.Dir, "cert-manager.kubeconfig")
	if err := os.WriteFile(kubeconfig, opts.Kubeconfig, 0o600); err != nil {
		return nil, fmt.Errorf("writing the cert-manager kubeconfig: %w", err)
	}
	args := []string{"--kubeconfig", kubeconfig, "--namespace", opts.Namespace, "-v", strconv.Itoa(opts.Verbosity),
		// A failed request is tried again within seconds, not cert-manager's hour.
		"--request-backoff-min", "1s", "--request-backoff-max", "5s"}
	if opts.ClusterResourceNamespace != "" {
		args = append(args, "--cluster-resource-namespace", opts.ClusterResourceNamespace)
	}
	c := &Controllers{done: make(chan struct{}), Log: filepath.Join(opts.Dir, "controllers.log")}
	out, err := os.Create(c.Log)
	if err != nil {
		return nil, fmt.Errorf("creating the cert-manager log: %w", err)
	}
	c.cmd = exec.CommandContext(context.WithoutCancel(ctx), bin, args...) // outlives ctx: Stop ends it
	c.cmd.Stdout, c.cmd.Stderr = out, out
	// A test binary that dies leaves no controllers behind.
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := c.cmd.Start(); err != nil {
		_ = out.Close()
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	go func() {
		_ = c.cmd.Wait()
		_ = out.Close()
		close(c.done)
	}()
	if err := c.waitStarted(ctx, time.Minute); err != nil {
		_ = c.Stop()
		return nil, err
	}
	return c, nil
}

func (c *Controllers) waitStarted(ctx context.Context, timeout time.Duration) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if log, _ := os.ReadFile(c.Log); bytes.Contains(log, []byte(startedLine)) {
			return nil
		}
		select {
		case <-c.done:
			return fmt.Errorf("the cert-manager controllers exited (%s):\n%s", c.cmd.ProcessState, c.Tail())
		case <-deadline.C:
			return fmt.Errorf("the cert-manager controllers did not start within %s:\n%s", timeout, c.Tail())
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// Running reports whether the process still runs.
func (c *Controllers) Running() bool {
	select {
	case <-c.done:
		return false
	default:
		return true
	}
}

// Tail is the end of the log, for a failure message.
func (c *Controllers) Tail() string {
	log, _ := os.ReadFile(c.Log)
	if len(log) > 4000 {
		log = log[len(log)-4000:]
	}
	return string(log)
}

// Stop ends the process with SIGTERM and waits for it.
func (c *Controllers) Stop() error {
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("stopping the cert-manager controllers: %w", err)
	}
	select {
	case <-c.done:
		return nil
	case <-time.After(20 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done
		return errors.New("the cert-manager controllers did not exit within 20s of SIGTERM and were killed")
	}
}

package promtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"sigs.k8s.io/yaml"
)

// Job is one scrape job of static targets: what a ServiceMonitor endpoint
// becomes once Kubernetes service discovery is replaced by addresses.
type Job struct {
	// Name is the job_name, and so the job label of its series.
	Name string
	// Path and Scheme of the metrics endpoint (default /metrics, http).
	Path, Scheme string
	// Interval and Timeout of each scrape.
	Interval, Timeout time.Duration
	// Targets are host:port addresses.
	Targets []string
	// Labels are added to every series of the job, as the Prometheus
	// Operator adds namespace, service and endpoint from the target.
	Labels map[string]string
}

// Options configure a server.
type Options struct {
	// BinDir holds the prometheus binary (see Binaries).
	BinDir string
	// Dir holds the configuration, the rules, the TSDB and the log.
	Dir  string
	Jobs []Job
	// Rules is a rules file (groups:); empty for none.
	Rules []byte
	// EvaluationInterval of the rules (default 1s).
	EvaluationInterval time.Duration
	// Port on loopback; 0 picks a free one.
	Port int
}

// Server is a running prometheus on loopback.
type Server struct {
	// URL is the server's base URL, http://127.0.0.1:<port>.
	URL string
	// Log is the path of its log.
	Log string
	cmd *exec.Cmd
	// done is closed once the process has exited, with its error in exitErr.
	done    chan struct{}
	exitErr error
}

// Start writes the configuration and starts prometheus with it on a free
// loopback port; it returns once the server is ready.
func Start(ctx context.Context, opts Options) (*Server, error) {
	cfg, err := config(opts)
	if err != nil {
		return nil, err
	}
	cfgPath := filepath.Join(opts.Dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, cfg, 0o600); err != nil {
		return nil, fmt.Errorf("writing the prometheus configuration: %w", err)
	}
	if len(opts.Rules) > 0 {
		if err := os.WriteFile(filepath.Join(opts.Dir, "rules.yml"), opts.Rules, 0o600); err != nil {
			return nil, fmt.Errorf("writing the rules: %w", err)
		}
	}
	port := opts.Port
	if port == 0 {
		if port, err = freePort(ctx); err != nil {
			return nil, err
		}
	}
	s := &Server{URL: "http://127.0.0.1:" + strconv.Itoa(port), Log: filepath.Join(opts.Dir, "prometheus.log"), done: make(chan struct{})}
	logFile, err := os.Create(s.Log)
	if err != nil {
		return nil, fmt.Errorf("creating the prometheus log: %w", err)
	}
	defer func() { _ = logFile.Close() }() // the process has its own descriptor
	// The server outlives ctx, which bounds only the start.
	s.cmd = exec.CommandContext(context.WithoutCancel(ctx), filepath.Join(opts.BinDir, "prometheus"),
		"--config.file="+cfgPath,
		"--storage.tsdb.path="+filepath.Join(opts.Dir, "data"),
		"--storage.tsdb.retention.time=1d",
		"--web.listen-address=127.0.0.1:"+strconv.Itoa(port),
		// The package's consoles are not used: an empty folder keeps it
		// from reading /etc/prometheus.
		"--web.console.templates="+opts.Dir, "--web.console.libraries="+opts.Dir,
	)
	s.cmd.Stdout, s.cmd.Stderr = logFile, logFile
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting prometheus: %w", err)
	}
	go func() {
		s.exitErr = s.cmd.Wait()
		close(s.done)
	}()
	if err := s.waitReady(ctx); err != nil {
		_ = s.Stop()
		return nil, err
	}
	return s, nil
}

// config is the prometheus.yml of opts.
func config(opts Options) ([]byte, error) {
	eval := opts.EvaluationInterval
	if eval == 0 {
		eval = time.Second
	}
	scrapes := make([]map[string]any, 0, len(opts.Jobs))
	for _, j := range opts.Jobs {
		if j.Path == "" {
			j.Path = "/metrics"
		}
		if j.Scheme == "" {
			j.Scheme = "http"
		}
		scrapes = append(scrapes, map[string]any{
			"job_name": j.Name, "metrics_path": j.Path, "scheme": j.Scheme,
			"scrape_interval": j.Interval.String(), "scrape_timeout": j.Timeout.String(),
			"static_configs": []map[string]any{{"targets": j.Targets, "labels": j.Labels}},
		})
	}
	cfg := map[string]any{
		"global":         map[string]any{"evaluation_interval": eval.String()},
		"scrape_configs": scrapes,
	}
	if len(opts.Rules) > 0 {
		cfg["rule_files"] = []string{filepath.Join(opts.Dir, "rules.yml")}
	}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("encoding the prometheus configuration: %w", err)
	}
	return out, nil
}

func (s *Server) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/-/ready", nil)
		if err != nil {
			return fmt.Errorf("asking prometheus whether it is ready: %w", err)
		}
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-s.done:
			return fmt.Errorf("prometheus exited before it was ready (%w); see %s", s.exitErr, s.Log)
		case <-ctx.Done():
			return fmt.Errorf("prometheus not ready within a minute; see %s", s.Log)
		case <-tick.C:
		}
	}
}

// Stop ends the server and waits for it.
func (s *Server) Stop() error {
	if s == nil || s.cmd == nil || s.cmd.Process == nil {
		return nil
	}
	select {
	case <-s.done:
		return nil // already exited
	default:
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("stopping prometheus: %w", err)
	}
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
	return nil
}

func freePort(ctx context.Context) (int, error) {
	l, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port for prometheus: %w", err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}

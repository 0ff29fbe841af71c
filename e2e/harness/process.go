package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// Process is a binary the harness runs, with its output in a log file.
type Process struct {
	Name string
	Bin  string
	Args []string
	Env  []string
	Log  string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// Start runs the process; it keeps running until Stop or ctx ends.
func (p *Process) Start(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(p.Log), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(p.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("opening the log of %s: %w", p.Name, err)
	}
	_, _ = fmt.Fprintf(out, "\n=== %s started %s\n", p.Name, time.Now().Format(time.RFC3339Nano))
	cmd := exec.CommandContext(ctx, p.Bin, p.Args...)
	cmd.Env = append(os.Environ(), p.Env...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 20 * time.Second
	if err := cmd.Start(); err != nil {
		_ = out.Close()
		return fmt.Errorf("starting %s: %w", p.Name, err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		_ = out.Close()
		close(done)
	}()
	p.cmd, p.done = cmd, done
	return nil
}

// Running reports whether the process runs.
func (p *Process) Running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Pid is the process id while it runs, else 0.
func (p *Process) Pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// Stop ends the process with SIGTERM and waits for it; one that has not
// exited 30 s later is killed.
func (p *Process) Stop() error {
	return p.signal(syscall.SIGTERM)
}

// signal sends sig to the process and waits until it is gone; a process
// that does not run is no error.
func (p *Process) signal(sig syscall.Signal) error {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.cmd, p.done = nil, nil
	p.mu.Unlock()
	if cmd == nil {
		return nil
	}
	if err := cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("sending %s to %s: %w", sig, p.Name, err)
	}
	select {
	case <-done:
		return nil
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		return fmt.Errorf("%s did not exit within 30s of %s and was killed", p.Name, sig)
	}
}

// Tail returns the end of the process's log.
func (p *Process) Tail(bytes int64) string {
	f, err := os.Open(p.Log)
	if err != nil {
		return ""
	}
	defer func() { _ = f.Close() }()
	info, err := f.Stat()
	if err != nil {
		return ""
	}
	start := info.Size() - bytes
	if start < 0 {
		start = 0
	}
	buf := make([]byte, info.Size()-start)
	_, _ = f.ReadAt(buf, start)
	return string(buf)
}

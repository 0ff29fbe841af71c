package render

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/metrics"
	"time"
)

// A Helm chart renders in Helm's template engine, which has no context and
// writes into buffers of its own: a chart that loops runs and allocates
// until it ends. With Options.Isolate, the engine runs in a child process —
// this binary again, told by childEnv — that the parent kills at the
// deadline, and that kills itself when its heap grows past
// MaxHeap(Limits.MaxBytes). The parent reads at most a bounded answer.

// childEnv, set to childValue, makes a binary that links this package a
// render child (see init). Nothing else sets it.
const (
	childEnv   = "LIFECYCLE_MANAGER_RENDER_CHILD"
	childValue = "helm-v1"
)

// Exit codes of a child that stopped itself.
const (
	exitBadJob = 3
	exitMemory = 4
	exitTime   = 5
)

// heapCheckInterval is how often a child looks at its heap. A template
// allocates at most a few GB/s, so it overshoots by a few MB.
const heapCheckInterval = 2 * time.Millisecond

// init turns the process into a render child before anything else runs,
// in every binary that links this package, test binaries included; no
// main has to remember to call it.
func init() { //nolint:gochecknoinits // the child must take over before main or TestMain run
	if os.Getenv(childEnv) == childValue {
		os.Exit(serveChild(os.Stdin, os.Stdout, os.Stderr))
	}
}

// helmResult crosses the process boundary: the output, or the error.
type helmResult struct {
	Output    *helmOutput
	ErrSource string
	Err       string
	Limit     *LimitError
}

func resultOf(out *helmOutput, err error) helmResult {
	var (
		limit *LimitError
		doc   *DocumentError
	)
	switch {
	case err == nil:
		return helmResult{Output: out}
	case errors.As(err, &limit):
		return helmResult{Limit: limit}
	case errors.As(err, &doc):
		return helmResult{ErrSource: doc.Source, Err: doc.Err.Error()}
	default:
		return helmResult{Err: err.Error()}
	}
}

func (r helmResult) unpack() (*helmOutput, error) {
	switch {
	case r.Limit != nil:
		return nil, r.Limit
	case r.Err != "":
		return nil, &DocumentError{Source: r.ErrSource, Err: errors.New(r.Err)}
	case r.Output == nil:
		return nil, errors.New("the Helm render process answered nothing")
	}
	return r.Output, nil
}

// serveChild renders one job from in and writes the result to out.
func serveChild(in io.Reader, out, errOut io.Writer) int {
	var job helmJob
	if err := gob.NewDecoder(in).Decode(&job); err != nil {
		_, _ = fmt.Fprintln(errOut, "reading the render job:", err)
		return exitBadJob
	}
	limits := job.Limits.withDefaults()
	heap := MaxHeap(limits.MaxBytes)
	go watchHeap(uint64(heap), errOut)
	time.AfterFunc(limits.Timeout, func() {
		_, _ = fmt.Fprintln(errOut, "render time is up")
		os.Exit(exitTime)
	})
	if err := gob.NewEncoder(out).Encode(resultOf(runHelm(&job))); err != nil {
		_, _ = fmt.Fprintln(errOut, "writing the render result:", err)
		return exitBadJob
	}
	return 0
}

// watchHeap ends the process when its heap objects pass limit.
func watchHeap(limit uint64, errOut io.Writer) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	for range time.Tick(heapCheckInterval) {
		metrics.Read(sample)
		if used := sample[0].Value.Uint64(); used > limit {
			_, _ = fmt.Fprintf(errOut, "heap of %d bytes is over the limit of %d\n", used, limit)
			os.Exit(exitMemory)
		}
	}
}

// runIsolated runs a job in a child process, killed when ctx ends.
func runIsolated(ctx context.Context, job *helmJob) (*helmOutput, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding this binary to render in: %w", err)
	}
	var in bytes.Buffer
	if err := gob.NewEncoder(&in).Encode(job); err != nil {
		return nil, fmt.Errorf("encoding the render job: %w", err)
	}
	limits := job.Limits.withDefaults()
	// The answer holds at most MaxBytes of YAML; gob adds little.
	out := &cappedBuffer{limit: int(limits.MaxBytes) + 1<<20}
	errOut := &cappedBuffer{limit: 4 << 10, truncate: true}
	cmd := exec.CommandContext(ctx, exe, "--lifecycle-manager-render-child")
	// Only what the child needs: nothing of the operator's environment.
	cmd.Env = []string{childEnv + "=" + childValue, "GOMAXPROCS=1"}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = &in, out, errOut
	cmd.WaitDelay = time.Second
	err = cmd.Run()
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case out.over:
		return nil, bytesLimit(limits, "the chart renders more")
	case err != nil:
		return nil, childFailure(limits, err, errOut.String())
	}
	var res helmResult
	if err := gob.NewDecoder(&out.buf).Decode(&res); err != nil {
		return nil, fmt.Errorf("reading the Helm render process's answer: %w", err)
	}
	return res.unpack()
}

func childFailure(limits Limits, err error, stderr string) error {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		switch exit.ExitCode() {
		case exitMemory:
			return memoryLimit(limits)
		case exitTime:
			return timeLimit(limits)
		}
	}
	return fmt.Errorf("the Helm render process failed: %w: %s", err, bytes.TrimSpace([]byte(stderr)))
}

// cappedBuffer keeps at most limit bytes; beyond, it fails the write
// (which ends the child's output) or, with truncate, drops the rest.
type cappedBuffer struct {
	buf      bytes.Buffer
	limit    int
	truncate bool
	over     bool
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if room := c.limit - c.buf.Len(); len(p) > room {
		c.over = true
		if !c.truncate {
			return 0, errors.New("the Helm render process answered more than allowed")
		}
		c.buf.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return c.buf.Write(p)
}

func (c *cappedBuffer) String() string { return c.buf.String() }

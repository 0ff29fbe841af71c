package kyma_test

import (
	"bytes"
	"fmt"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// logRing keeps the operator's latest log lines, so that a test that
// times out can show what the operator did with its objects: the suite's
// failures are rare and happen under load, where a rerun with
// TEST_OPERATOR_LOGS set does not reproduce them.
type logRing struct {
	mu    sync.Mutex
	lines []string
	next  int
	full  bool
}

func newLogRing(size int) *logRing { return &logRing{lines: make([]string, size)} }

func (r *logRing) add(line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines[r.next] = line
	r.next = (r.next + 1) % len(r.lines)
	r.full = r.full || r.next == 0
}

// about returns the last max kept lines that mention name, oldest first.
func (r *logRing) about(name string, maxLines int) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	ordered := r.lines[:r.next]
	if r.full {
		ordered = append(append([]string{}, r.lines[r.next:]...), r.lines[:r.next]...)
	}
	var found []string
	for _, l := range ordered {
		if strings.Contains(l, name) {
			found = append(found, l)
		}
	}
	return found[max(0, len(found)-maxLines):]
}

// operatorLogs is filled by the suite's operator.
var operatorLogs = newLogRing(20000)

// logOperatorAbout writes into the test's output the operator's recent log
// lines about name and how busy its controllers are: whether the object's
// reconciles failed, or were not run at all.
func logOperatorAbout(t *testing.T, name string) {
	t.Helper()
	lines := operatorLogs.about(name, 100)
	t.Logf("the operator's last %d log lines about %q:\n%s", len(lines), name, strings.Join(lines, "\n"))
	t.Logf("the controllers' queues:\n%s", controllerLoad())
	t.Logf("the reconciles running now:\n%s", runningReconciles())
}

// runningReconciles returns the stacks of the goroutines inside a
// reconciler or started by one: a reconcile that hangs shows where.
func runningReconciles() string {
	var buf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&buf, 2); err != nil {
		return "cannot dump goroutines: " + err.Error()
	}
	var found []string
	for _, g := range strings.Split(buf.String(), "\n\n") {
		if strings.Contains(g, "lifecycle-manager/kcp-operator/internal/controller/") && !strings.Contains(g, "_test.go") {
			found = append(found, g)
		}
	}
	return strings.Join(found, "\n\n")
}

// controllerLoad lists controller-runtime's queue and worker gauges.
func controllerLoad() string {
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		return "cannot gather: " + err.Error()
	}
	wanted := map[string]bool{"workqueue_depth": true, "controller_runtime_active_workers": true, "controller_runtime_reconcile_errors_total": true, "controller_runtime_reconcile_total": true}
	var b strings.Builder
	for _, f := range families {
		if !wanted[f.GetName()] {
			continue
		}
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetValue())
			}
			value := m.GetGauge().GetValue() + m.GetCounter().GetValue()
			fmt.Fprintf(&b, "%s{%s} %g\n", f.GetName(), strings.Join(labels, ","), value)
		}
	}
	return b.String()
}

func TestLogRingKeepsTheLatestLinesAboutAName(t *testing.T) {
	r := newLogRing(4)
	for i := range 6 {
		r.add(fmt.Sprintf("line %d of kyma-%d", i, i%2))
	}
	tests := []struct {
		name string
		max  int
		want []string
	}{
		{"kyma-0", 10, []string{"line 2 of kyma-0", "line 4 of kyma-0"}},
		{"kyma-1", 1, []string{"line 5 of kyma-1"}},
		{"line", 10, []string{"line 2 of kyma-0", "line 3 of kyma-1", "line 4 of kyma-0", "line 5 of kyma-1"}},
		{"absent", 10, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, r.about(tt.name, tt.max))
		})
	}
}

// activeWorkers is how many reconciles the controller runs right now; -1
// when controller-runtime has no gauge for it.
func activeWorkers(t *testing.T, controller string) float64 {
	t.Helper()
	return gaugeIn(t, ctrlmetrics.Registry, "controller_runtime_active_workers", map[string]string{"controller": controller})
}

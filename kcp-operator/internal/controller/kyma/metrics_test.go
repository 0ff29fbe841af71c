package kyma

import (
	"cmp"
	"crypto/fips140"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lifecycle-manager/api/publicmetrics"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
)

// observation is one status written for a Kyma; forget deletes the Kyma,
// mandatory (when not nil) records its mandatory modules instead.
type observation struct {
	kyma    string
	state   shared.State
	modules map[string]shared.State
	forget  bool

	namespace          string // "ns" when empty
	domain, instanceID string
	mandatory          map[string]shared.State
}

func TestStateMetricsStayFewWhenReady(t *testing.T) {
	tests := []struct {
		name  string
		steps []observation
		want  []string // every series of the state metrics, as name{labels} value
	}{
		{
			name: "a Ready Kyma is only counted",
			steps: []observation{
				{kyma: "a", state: shared.StateReady, modules: map[string]shared.State{"m": shared.StateReady}},
			},
			want: []string{"kymas{state=Ready} 1", "modules{module=m,state=Ready} 1"},
		},
		{
			name: "a Kyma not Ready has its own series",
			steps: []observation{
				{kyma: "a", state: shared.StateError, modules: map[string]shared.State{"m": shared.StateError, "n": shared.StateReady}},
			},
			want: []string{
				"kyma_state{kyma=a,namespace=ns,state=Error} 1", "kymas{state=Error} 1",
				"module_state{kyma=a,module=m,namespace=ns,state=Error} 1",
				"modules{module=m,state=Error} 1", "modules{module=n,state=Ready} 1",
			},
		},
		{
			name: "becoming Ready moves the count and drops the series",
			steps: []observation{
				{kyma: "a", state: shared.StateProcessing, modules: map[string]shared.State{"m": shared.StateProcessing}},
				{kyma: "b", state: shared.StateReady, modules: map[string]shared.State{"m": shared.StateReady}},
				{kyma: "a", state: shared.StateReady, modules: map[string]shared.State{"m": shared.StateReady}},
			},
			want: []string{
				"kymas{state=Processing} 0", "kymas{state=Ready} 2",
				"modules{module=m,state=Processing} 0", "modules{module=m,state=Ready} 2",
			},
		},
		{
			name: "a module removed from the status is no longer counted",
			steps: []observation{
				{kyma: "a", state: shared.StateWarning, modules: map[string]shared.State{"m": shared.StateWarning}},
				{kyma: "a", state: shared.StateReady, modules: map[string]shared.State{}},
			},
			want: []string{"kymas{state=Ready} 1", "kymas{state=Warning} 0", "modules{module=m,state=Warning} 0"},
		},
		{
			name: "a deleted Kyma leaves nothing behind",
			steps: []observation{
				{kyma: "a", state: shared.StateError, modules: map[string]shared.State{"m": shared.StateError}},
				{kyma: "a", forget: true},
				{kyma: "a", forget: true},
			},
			want: []string{"kymas{state=Error} 0", "modules{module=m,state=Error} 0"},
		},
		{
			name: "an unchanged status changes nothing",
			steps: []observation{
				{kyma: "a", state: shared.StateReady, modules: map[string]shared.State{"m": shared.StateReady}},
				{kyma: "a", state: shared.StateReady, modules: map[string]shared.State{"m": shared.StateReady}},
			},
			want: []string{"kymas{state=Ready} 1", "modules{module=m,state=Ready} 1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			m, err := NewMetrics(reg)
			require.NoError(t, err)
			observe(m, tt.steps)
			assert.Equal(t, tt.want, stateSeries(t, reg))
		})
	}
}

func observe(m *Metrics, steps []observation) {
	for _, step := range steps {
		kyma, status := kymaWithStatus(step)
		switch {
		case step.forget:
			m.forget(kyma.Namespace, kyma.Name)
		case step.mandatory != nil:
			m.observeMandatory(kyma, step.mandatory)
		default:
			m.observeStatus(kyma, status)
		}
	}
}

func kymaWithStatus(o observation) (*v1beta2.Kyma, v1beta2.KymaStatus) {
	kyma := &v1beta2.Kyma{ObjectMeta: metav1.ObjectMeta{Namespace: cmp.Or(o.namespace, "ns"), Name: o.kyma}}
	if o.domain != "" {
		kyma.Annotations = map[string]string{shared.SKRDomainAnnotation: o.domain}
	}
	if o.instanceID != "" {
		kyma.Labels = map[string]string{InstanceIDLabel: o.instanceID}
	}
	status := v1beta2.KymaStatus{State: o.state}
	for name, state := range o.modules {
		status.Modules = append(status.Modules, v1beta2.ModuleStatus{Name: name, State: state})
	}
	return kyma, status
}

// stateSeries lists the series of the four state metrics, sorted, without
// the common name prefix.
func stateSeries(t *testing.T, reg *prometheus.Registry) []string {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	var out []string
	for _, f := range families {
		name, ok := strings.CutPrefix(f.GetName(), "lifecycle_manager_")
		if !ok || !strings.Contains(name, "state") && name != "kymas" && name != "modules" {
			continue
		}
		for _, s := range f.GetMetric() {
			var labels []string
			for _, l := range s.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			out = append(out, name+"{"+strings.Join(labels, ",")+"} "+strconv.FormatFloat(s.GetGauge().GetValue(), 'f', -1, 64))
		}
	}
	sort.Strings(out)
	return out
}

func TestPublicStateMetricsFollowOurs(t *testing.T) {
	ready := observation{kyma: "a", state: shared.StateReady, modules: map[string]shared.State{"m": shared.StateReady},
		domain: "c-12ab.kyma.example.com", instanceID: "i-1"}
	tests := []struct {
		name  string
		steps []observation
		ones  []string // the series of value 1, as name{labels}
		count map[string]int
	}{
		{
			name:  "a Ready Kyma has a series per state, 1 for Ready",
			steps: []observation{ready},
			ones: []string{
				"kyma_state{instance_id=i-1,kyma_name=a,shoot=c-12ab,state=Ready}",
				"module_state{instance_id=i-1,kyma_name=a,module_name=m,shoot=c-12ab,state=Ready}",
			},
			count: map[string]int{"kyma_state": 5, "module_state": 6},
		},
		{
			name: "a change of state moves the 1",
			steps: []observation{ready, {kyma: "a", state: shared.StateError, domain: ready.domain, instanceID: "i-1",
				modules: map[string]shared.State{"m": shared.StateUnmanaged}}},
			ones: []string{
				"kyma_state{instance_id=i-1,kyma_name=a,shoot=c-12ab,state=Error}",
				"module_state{instance_id=i-1,kyma_name=a,module_name=m,shoot=c-12ab,state=Unmanaged}",
			},
			count: map[string]int{"kyma_state": 5, "module_state": 6},
		},
		{
			name:  "a module removed from the status loses its series",
			steps: []observation{ready, {kyma: "a", state: shared.StateReady, modules: map[string]shared.State{}}},
			ones:  []string{"kyma_state{instance_id=,kyma_name=a,shoot=,state=Ready}"},
			count: map[string]int{"kyma_state": 5},
		},
		{
			name: "mandatory modules show the states of their Manifests and survive status writes",
			steps: []observation{
				{kyma: "a", mandatory: map[string]shared.State{"warden": shared.StateProcessing, "gone": shared.StateReady}},
				{kyma: "a", mandatory: map[string]shared.State{"warden": shared.StateWarning}},
				{kyma: "a", state: shared.StateReady},
			},
			ones: []string{
				"kyma_state{instance_id=,kyma_name=a,shoot=,state=Ready}",
				"mandatory_module_state{kyma_name=a,module_name=warden,state=Warning}",
			},
			count: map[string]int{"kyma_state": 5, "mandatory_module_state": 5},
		},
		{
			name: "a deleted Kyma leaves nothing behind",
			steps: []observation{ready, {kyma: "a", mandatory: map[string]shared.State{"warden": shared.StateReady}},
				{kyma: "a", forget: true}},
		},
		{
			name:  "a Kyma without a state yet has every state at 0",
			steps: []observation{{kyma: "a", modules: map[string]shared.State{"m": ""}}},
			count: map[string]int{"kyma_state": 5, "module_state": 6},
		},
		{
			name: "of Kymas of one name in several namespaces the first namespace's is shown",
			steps: []observation{
				{kyma: "a", namespace: "z", state: shared.StateError},
				{kyma: "a", namespace: "b", state: shared.StateReady},
			},
			ones:  []string{"kyma_state{instance_id=,kyma_name=a,shoot=,state=Ready}"},
			count: map[string]int{"kyma_state": 5},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			m, err := NewMetrics(reg)
			require.NoError(t, err)
			observe(m, tt.steps)
			ones, count := publicStateSeries(t, reg)
			assert.Equal(t, tt.ones, ones)
			if tt.count == nil {
				tt.count = map[string]int{}
			}
			assert.Equal(t, tt.count, count)
		})
	}
}

func TestPublicRequeueReasons(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	require.NoError(t, err)
	const header = "# HELP lifecycle_mgr_requeue_reason_total Indicates the reason for requeue " +
		"(from lifecycle_manager_kyma_requeues_total: error is unexpected, busy intended)\n" +
		"# TYPE lifecycle_mgr_requeue_reason_total counter\n"
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(header+
		"lifecycle_mgr_requeue_reason_total{requeue_reason=\"busy\",requeue_type=\"intended\"} 0\n"+
		"lifecycle_mgr_requeue_reason_total{requeue_reason=\"error\",requeue_type=\"unexpected\"} 0\n",
	), "lifecycle_mgr_requeue_reason_total"), "both series exist before the first requeue")

	m.reconciled(time.Millisecond, ctrl.Result{}, errors.New("boom"))
	m.reconciled(time.Millisecond, ctrl.Result{}, errors.New("boom"))
	m.reconciled(time.Millisecond, ctrl.Result{RequeueAfter: time.Second}, nil)
	m.reconciled(time.Millisecond, ctrl.Result{RequeueAfter: time.Hour}, nil)
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(header+
		"lifecycle_mgr_requeue_reason_total{requeue_reason=\"busy\",requeue_type=\"intended\"} 1\n"+
		"lifecycle_mgr_requeue_reason_total{requeue_reason=\"error\",requeue_type=\"unexpected\"} 2\n",
	), "lifecycle_mgr_requeue_reason_total"), "a successful reconcile's periodic requeue is not counted, as in the public operator")
}

// publicStateSeries lists the series of value 1 of the public state
// metrics, sorted and without the common name prefix, and counts the
// series per metric.
func publicStateSeries(t *testing.T, reg *prometheus.Registry) ([]string, map[string]int) {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	var ones []string
	count := map[string]int{}
	for _, f := range families {
		name, ok := strings.CutPrefix(f.GetName(), "lifecycle_mgr_")
		if !ok || !strings.HasSuffix(name, "_state") {
			continue
		}
		for _, s := range f.GetMetric() {
			count[name]++
			if s.GetGauge().GetValue() != 1 {
				continue
			}
			var labels []string
			for _, l := range s.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			ones = append(ones, name+"{"+strings.Join(labels, ",")+"}")
		}
	}
	sort.Strings(ones)
	return ones, count
}

func TestPublicMaintenanceConfigReadSuccess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`default: {days: [Sat], begin: "20:00", end: "23:00"}`), 0o600))
	tests := []struct {
		name string
		mt   *Maintenance
		// write, when not empty, replaces the policy file before the scrape.
		write string
		want  string
	}{
		{name: "no policy configured", mt: NewMaintenance("", logr.Discard()), want: "1"},
		{name: "a usable policy", mt: NewMaintenance(path, logr.Discard()), want: "1"},
		{name: "the policy became unusable", mt: NewMaintenance(path, logr.Discard()), write: "default: [not a window", want: "0"},
		{name: "the policy file is missing", mt: NewMaintenance(filepath.Join(t.TempDir(), "none.yaml"), logr.Discard()), want: "0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			require.NoError(t, ObserveMaintenance(reg, tt.mt))
			if tt.write != "" {
				require.NoError(t, os.WriteFile(path, []byte(tt.write), 0o600))
			}
			require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(
				"# HELP lifecycle_mgr_maintenance_window_config_read_success Indicates whether the maintenance window configuration "+
					"was read successfully (1 for success, 0 for failure)\n"+
					"# TYPE lifecycle_mgr_maintenance_window_config_read_success gauge\n"+
					"lifecycle_mgr_maintenance_window_config_read_success "+tt.want+"\n")))
		})
	}
}

func TestPublicFIPSMode(t *testing.T) {
	reg := prometheus.NewRegistry()
	_, err := NewMetrics(reg)
	require.NoError(t, err)
	want := "0"
	switch {
	case fips140.Enforced():
		want = "2"
	case fips140.Enabled():
		want = "1"
	}
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(
		"# HELP lifecycle_mgr_fips_mode current FIPS mode (0=off/1=on/2=only)\n# TYPE lifecycle_mgr_fips_mode gauge\nlifecycle_mgr_fips_mode "+want+"\n"),
		"lifecycle_mgr_fips_mode"))
}

// TestMigrationDocListsPublicMetrics keeps the migration guide's table of
// the public operator's metrics true to what the KCP operator registers:
// every lifecycle_mgr_ name, both ways, and none of those it says are not
// exported. (The listener's watcher_listener_ names are checked by its own
// module.)
func TestMigrationDocListsPublicMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	require.NoError(t, err)
	require.NoError(t, ObserveMaintenance(reg, nil))
	// A series of every state metric, or the collector has nothing to show.
	observe(m, []observation{
		{kyma: "a", state: shared.StateReady, modules: map[string]shared.State{"m": shared.StateReady}},
		{kyma: "a", mandatory: map[string]shared.State{"warden": shared.StateReady}},
	})
	doc, err := os.ReadFile("../../../../docs/migration.md")
	require.NoError(t, err)
	problems, err := publicmetrics.Mismatches(doc, reg, func(name string) bool { return strings.HasPrefix(name, "lifecycle_mgr_") })
	require.NoError(t, err)
	assert.Empty(t, problems)
}

package kyma

import (
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
)

// observation is one status written for a Kyma; forget deletes the Kyma.
type observation struct {
	kyma    string
	state   shared.State
	modules map[string]shared.State
	forget  bool
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
			for _, step := range tt.steps {
				if step.forget {
					m.forget("ns", step.kyma)
					continue
				}
				m.observeStatus(kymaWithStatus(step))
			}
			assert.Equal(t, tt.want, stateSeries(t, reg))
		})
	}
}

func kymaWithStatus(o observation) (*v1beta2.Kyma, v1beta2.KymaStatus) {
	kyma := &v1beta2.Kyma{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: o.kyma}}
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

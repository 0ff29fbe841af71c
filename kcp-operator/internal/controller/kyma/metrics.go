package kyma

import (
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
)

var allStates = []shared.State{
	shared.StateReady, shared.StateProcessing, shared.StateWarning, shared.StateError, shared.StateDeleting,
}

// Metrics of the Kyma controller.
type Metrics struct {
	kymaState   *prometheus.GaugeVec
	moduleState *prometheus.GaugeVec
	duration    *prometheus.HistogramVec
	requeues    *prometheus.CounterVec

	// recorded remembers the states last exported per Kyma, so that an
	// unchanged Kyma costs no metric updates and stale series can be
	// deleted one by one instead of by scanning.
	mu       sync.Mutex
	recorded map[types.NamespacedName]exported
}

type exported struct {
	state   shared.State
	modules map[string]shared.State
}

// NewMetrics registers the Kyma controller's metrics on reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		recorded: map[types.NamespacedName]exported{},
		kymaState: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "lifecycle_manager_kyma_state",
			Help: "1 for the current state of each Kyma, 0 for the others.",
		}, []string{"namespace", "kyma", "state"}),
		moduleState: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "lifecycle_manager_module_state",
			Help: "1 for the current state of each module of each Kyma, 0 for the others.",
		}, []string{"namespace", "kyma", "module", "state"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "lifecycle_manager_kyma_reconcile_duration_seconds",
			Help:    "Duration of Kyma reconciles, by result.",
			Buckets: prometheus.ExponentialBuckets(0.005, 2.5, 10),
		}, []string{"result"}),
		requeues: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lifecycle_manager_kyma_requeues_total",
			Help: "Kyma reconciles that asked to run again, by reason (error, success, busy).",
		}, []string{"reason"}),
	}
	for _, c := range []prometheus.Collector{m.kymaState, m.moduleState, m.duration, m.requeues} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("registering Kyma metrics: %w", err)
		}
	}
	return m, nil
}

func (m *Metrics) reconciled(d time.Duration, res ctrl.Result, err error) {
	if m == nil {
		return
	}
	result := "success"
	switch {
	case err != nil:
		result = "error"
	case res.RequeueAfter > 0 && res.RequeueAfter < time.Minute:
		result = "busy"
	}
	m.duration.WithLabelValues(result).Observe(d.Seconds())
	m.requeues.WithLabelValues(result).Inc()
}

func (m *Metrics) observeStatus(kyma *v1beta2.Kyma, status v1beta2.KymaStatus) {
	if m == nil {
		return
	}
	key := types.NamespacedName{Namespace: kyma.Namespace, Name: kyma.Name}
	m.mu.Lock()
	defer m.mu.Unlock()
	prev, seen := m.recorded[key]
	now := exported{state: status.State, modules: make(map[string]shared.State, len(status.Modules))}
	for _, ms := range status.Modules {
		now.modules[ms.Name] = ms.State
	}
	if !seen || prev.state != now.state {
		for _, s := range allStates {
			m.kymaState.WithLabelValues(kyma.Namespace, kyma.Name, string(s)).Set(boolFloat(s == status.State))
		}
	}
	for name, state := range prev.modules {
		if now.modules[name] != state {
			m.moduleState.DeleteLabelValues(kyma.Namespace, kyma.Name, name, string(state))
		}
	}
	for name, state := range now.modules {
		if !seen || prev.modules[name] != state {
			m.moduleState.WithLabelValues(kyma.Namespace, kyma.Name, name, string(state)).Set(1)
		}
	}
	m.recorded[key] = now
}

func (m *Metrics) forget(namespace, name string) {
	if m == nil {
		return
	}
	key := types.NamespacedName{Namespace: namespace, Name: name}
	m.mu.Lock()
	defer m.mu.Unlock()
	prev, seen := m.recorded[key]
	if !seen {
		return
	}
	for _, s := range allStates {
		m.kymaState.DeleteLabelValues(namespace, name, string(s))
	}
	for module, state := range prev.modules {
		m.moduleState.DeleteLabelValues(namespace, name, module, string(state))
	}
	delete(m.recorded, key)
}

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

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

// Metrics of the Kyma controller.
//
// States are exported in two ways, so that the series count does not grow
// with the fleet: counts per state for every Kyma and module, and one series
// per Kyma or module only while it is not Ready — the ones somebody has to
// look at. With 10,000 Ready Kymas of 5 modules a series for each would be
// 100,000 series per scrape.
type Metrics struct {
	kymas       *prometheus.GaugeVec
	modules     *prometheus.GaugeVec
	kymaState   *prometheus.GaugeVec
	moduleState *prometheus.GaugeVec
	duration    *prometheus.HistogramVec
	requeues    *prometheus.CounterVec

	// recorded remembers the states last exported per Kyma, so that an
	// unchanged Kyma costs no metric updates, the counts can be moved from
	// the old state to the new and stale series deleted one by one.
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
		kymas: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "lifecycle_manager_kymas",
			Help: "Kymas per state.",
		}, []string{"state"}),
		modules: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "lifecycle_manager_modules",
			Help: "Modules of all Kymas per module and state.",
		}, []string{"module", "state"}),
		kymaState: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "lifecycle_manager_kyma_state",
			Help: "1 for the current state of each Kyma that is not Ready; Ready Kymas have no series.",
		}, []string{"namespace", "kyma", "state"}),
		moduleState: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "lifecycle_manager_module_state",
			Help: "1 for the current state of each module of each Kyma that is not Ready; Ready modules have no series.",
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
	for _, c := range []prometheus.Collector{m.kymas, m.modules, m.kymaState, m.moduleState, m.duration, m.requeues} {
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
	now := exported{state: status.State, modules: make(map[string]shared.State, len(status.Modules))}
	for _, ms := range status.Modules {
		now.modules[ms.Name] = ms.State
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	prev := m.recorded[key]
	if prev.state != now.state {
		m.unexportKyma(key, prev.state)
		m.exportKyma(key, now.state)
	}
	for name, state := range prev.modules {
		if now.modules[name] != state {
			m.unexportModule(key, name, state)
		}
	}
	for name, state := range now.modules {
		if prev.modules[name] != state {
			m.exportModule(key, name, state)
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
	m.unexportKyma(key, prev.state)
	for module, state := range prev.modules {
		m.unexportModule(key, module, state)
	}
	delete(m.recorded, key)
}

// The export helpers take "" for "nothing exported": a Kyma without a
// state yet, or a module the previous status did not list.

func (m *Metrics) exportKyma(key types.NamespacedName, state shared.State) {
	if state == "" {
		return
	}
	m.kymas.WithLabelValues(string(state)).Inc()
	if state != shared.StateReady {
		m.kymaState.WithLabelValues(key.Namespace, key.Name, string(state)).Set(1)
	}
}

func (m *Metrics) unexportKyma(key types.NamespacedName, state shared.State) {
	if state == "" {
		return
	}
	m.kymas.WithLabelValues(string(state)).Dec()
	m.kymaState.DeleteLabelValues(key.Namespace, key.Name, string(state))
}

func (m *Metrics) exportModule(key types.NamespacedName, module string, state shared.State) {
	if state == "" {
		return
	}
	m.modules.WithLabelValues(module, string(state)).Inc()
	if state != shared.StateReady {
		m.moduleState.WithLabelValues(key.Namespace, key.Name, module, string(state)).Set(1)
	}
}

func (m *Metrics) unexportModule(key types.NamespacedName, module string, state shared.State) {
	if state == "" {
		return
	}
	m.modules.WithLabelValues(module, string(state)).Dec()
	m.moduleState.DeleteLabelValues(key.Namespace, key.Name, module, string(state))
}

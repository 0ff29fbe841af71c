package kyma

import (
	"cmp"
	"crypto/fips140"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lifecycle-manager/api/publicmetrics"

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
// 100,000 series per scrape. The series under the public operator's names
// (publicNames) are the exception: they keep its shape, a series per state
// for every Kyma and module, for the dashboards and alerts written for it.
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
	// mandatory (the states of the mandatory modules' Manifests, by module)
	// and the runtime's shoot and instance ID are shown only by the series
	// under the public operator's names.
	mandatory         map[string]shared.State
	shoot, instanceID string
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
	for _, c := range []prometheus.Collector{m.kymas, m.modules, m.kymaState, m.moduleState, m.duration, m.requeues,
		newPublicNames(m), newFIPSMode()} {
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
	now := exported{
		state: status.State, modules: make(map[string]shared.State, len(status.Modules)),
		shoot: shootOf(kyma), instanceID: kyma.Labels[InstanceIDLabel],
	}
	for _, ms := range status.Modules {
		now.modules[ms.Name] = ms.State
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	prev := m.recorded[key]
	now.mandatory = prev.mandatory
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

// observeMandatory records the states of the Manifests of kyma's mandatory
// modules, by module name; the status does not list them.
func (m *Metrics) observeMandatory(kyma *v1beta2.Kyma, states map[string]shared.State) {
	if m == nil {
		return
	}
	key := types.NamespacedName{Namespace: kyma.Namespace, Name: kyma.Name}
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.recorded[key]
	e.mandatory = states
	m.recorded[key] = e
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

// InstanceIDLabel is the label by which KCP provisioners give a Kyma its
// instance ID; only the public operator's metrics read it (instance_id).
const InstanceIDLabel = "kyma-project.io/instance-id"

// publicStates are the states the public operator exports a series for:
// of a Kyma or mandatory module, and, with unmanaged, of a module.
func publicStates(unmanaged bool) []shared.State {
	states := []shared.State{shared.StateReady, shared.StateProcessing, shared.StateError, shared.StateDeleting, shared.StateWarning}
	if unmanaged {
		states = append(states, shared.StateUnmanaged)
	}
	return states
}

// publicNames are the Kyma controller's metrics under the names and labels
// of the public lifecycle manager, for the dashboards and alerts written
// for it. They are computed at every scrape from what the controller
// recorded for its own metrics, so that the two cannot disagree. As there,
// a state metric has a series per state, 1 for the current one and 0 for
// the others, for every Kyma and module, Ready or not.
type publicNames struct {
	m                                      *Metrics
	kymaState, moduleState, mandatoryState *prometheus.Desc
	requeues                               *prometheus.Desc
}

func newPublicNames(m *Metrics) *publicNames {
	return &publicNames{
		m: m,
		kymaState: prometheus.NewDesc("lifecycle_mgr_kyma_state",
			"Indicates the Status.state for a given Kyma object (the public lifecycle manager's name for lifecycle_manager_kyma_state)",
			[]string{"kyma_name", "shoot", "instance_id", "state"}, nil),
		moduleState: prometheus.NewDesc("lifecycle_mgr_module_state",
			"Indicates the Status.state for modules of Kyma (the public lifecycle manager's name for lifecycle_manager_module_state)",
			[]string{"module_name", "kyma_name", "shoot", "instance_id", "state"}, nil),
		mandatoryState: prometheus.NewDesc("lifecycle_mgr_mandatory_module_state",
			"Indicates the Status.state for mandatory modules of Kyma (the state of their Manifests)",
			[]string{"module_name", "kyma_name", "state"}, nil),
		requeues: prometheus.NewDesc("lifecycle_mgr_requeue_reason_total",
			"Indicates the reason for requeue (from lifecycle_manager_kyma_requeues_total: error is unexpected, busy intended)",
			[]string{"requeue_reason", "requeue_type"}, nil),
	}
}

func (p *publicNames) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{p.kymaState, p.moduleState, p.mandatoryState, p.requeues} {
		ch <- d
	}
}

func (p *publicNames) Collect(ch chan<- prometheus.Metric) {
	p.m.mu.Lock()
	recorded := maps.Clone(p.m.recorded) // entries are replaced, never changed: a shallow copy is a snapshot
	p.m.mu.Unlock()
	// The public labels have no namespace: of Kymas of one name in several
	// namespaces only the first is shown, as a second series with the same
	// labels would fail the whole scrape.
	shown := make(map[string]bool, len(recorded))
	kymaStates, moduleStates := publicStates(false), publicStates(true)
	for _, key := range slices.SortedFunc(maps.Keys(recorded), compareKeys) {
		if shown[key.Name] {
			continue
		}
		shown[key.Name] = true
		e := recorded[key]
		sendStates(ch, p.kymaState, kymaStates, e.state, key.Name, e.shoot, e.instanceID)
		for module, state := range e.modules {
			sendStates(ch, p.moduleState, moduleStates, state, module, key.Name, e.shoot, e.instanceID)
		}
		for module, state := range e.mandatory {
			sendStates(ch, p.mandatoryState, kymaStates, state, module, key.Name)
		}
	}
	p.collectRequeues(ch)
}

// collectRequeues maps the reasons of lifecycle_manager_kyma_requeues_total
// onto the public requeue types. The periodic requeue of a successful
// reconcile is left out: the public operator does not count it either.
func (p *publicNames) collectRequeues(ch chan<- prometheus.Metric) {
	totals := map[string]float64{"error": 0, "busy": 0}
	publicmetrics.EachSeries(p.m.requeues, func(labels map[string]string, value float64) {
		if _, ok := totals[labels["reason"]]; ok {
			totals[labels["reason"]] += value
		}
	})
	for reason, total := range totals {
		requeueType := "intended"
		if reason == "error" {
			requeueType = "unexpected"
		}
		ch <- prometheus.MustNewConstMetric(p.requeues, prometheus.CounterValue, total, reason, requeueType)
	}
}

// sendStates sends a series of desc per state of all: 1 for current, 0
// for the others. labels are desc's labels but the last, the state.
func sendStates(ch chan<- prometheus.Metric, desc *prometheus.Desc, all []shared.State, current shared.State, labels ...string) {
	values := append(slices.Clip(labels), "")
	for _, state := range all {
		v := 0.0
		if state == current {
			v = 1
		}
		values[len(values)-1] = string(state)
		ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, v, values...)
	}
}

// newFIPSMode is the public operator's lifecycle_mgr_fips_mode, a
// property of the process, registered once with the Kyma metrics.
func newFIPSMode() prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "lifecycle_mgr_fips_mode", Help: "current FIPS mode (0=off/1=on/2=only)",
	}, func() float64 {
		switch {
		case fips140.Enforced():
			return 2
		case fips140.Enabled():
			return 1
		}
		return 0
	})
}

// ObserveMaintenance registers the public operator's
// lifecycle_mgr_maintenance_window_config_read_success for mt, read at
// every scrape: 1 while its policy is usable or none is configured, 0
// while the file cannot be read or parsed (the public operator read it
// once, at its start).
func ObserveMaintenance(reg prometheus.Registerer, mt *Maintenance) error {
	g := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "lifecycle_mgr_maintenance_window_config_read_success",
		Help: "Indicates whether the maintenance window configuration was read successfully (1 for success, 0 for failure)",
	}, func() float64 {
		if mt == nil {
			return 1
		}
		if _, err := mt.load(); err != nil {
			return 0
		}
		return 1
	})
	if err := reg.Register(g); err != nil {
		return fmt.Errorf("registering the maintenance policy metric: %w", err)
	}
	return nil
}

func compareKeys(a, b types.NamespacedName) int {
	return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
}

// shootOf is the public operator's shoot label: the first DNS label of the
// runtime's domain; "" without one.
func shootOf(kyma *v1beta2.Kyma) string {
	parts := strings.Split(kyma.Annotations[shared.SKRDomainAnnotation], ".")
	if len(parts) > 2 {
		return parts[0]
	}
	return ""
}

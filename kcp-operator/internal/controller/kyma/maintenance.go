package kyma

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/maintenance"
	"github.com/lifecycle-manager/kcp-operator/internal/resolve"
)

// Event reasons of maintenance windows, one Event per change of what a
// module waits for.
const (
	ReasonWaitingForMaintenanceWindow = "WaitingForMaintenanceWindow"
	ReasonMaintenancePolicyUnusable   = "MaintenancePolicyUnusable"
)

// PolicyPoll is how often Maintenance looks at the policy file for a
// change; a mounted ConfigMap takes about a minute to change on disk anyway.
const PolicyPoll = 10 * time.Second

// PolicySource gives the maintenance policy as it is now.
type PolicySource interface {
	Load() (*maintenance.Policy, error)
}

// Maintenance holds back module upgrades that require downtime until the
// runtime's maintenance window (internal/maintenance decides), and wakes
// the Kymas it held when their window begins or the policy changes. It is
// also the event source that does the waking: add it to the Reconciler's
// Sources. A nil *Maintenance holds nothing back.
type Maintenance struct {
	policy PolicySource // nil: no policy configured
	now    func() time.Time
	poll   time.Duration
	log    logr.Logger

	mu    sync.Mutex
	queue workqueue.TypedRateLimitingInterface[reconcile.Request]
	// held are the Kymas held back since the last policy change: a change
	// may open (or break) their window.
	held map[types.NamespacedName]struct{}
}

// NewMaintenance reads the policy from the file at path; empty means no
// policy: upgrades that require downtime are applied at once. It logs which
// of the two it is, and whether the policy is usable now.
func NewMaintenance(path string, log logr.Logger) *Maintenance {
	m := &Maintenance{now: time.Now, poll: PolicyPoll, log: log, held: map[types.NamespacedName]struct{}{}}
	if path == "" {
		log.Info("no --maintenance-policy: module upgrades that require downtime are applied at once")
		return m
	}
	m.policy = maintenance.NewFile(path)
	if _, err := m.policy.Load(); err != nil {
		log.Error(err, "the maintenance policy is unusable: module upgrades that require downtime wait until it is fixed", "path", path)
	} else {
		log.Info("module upgrades that require downtime wait for the maintenance windows of the policy", "path", path)
	}
	return m
}

// Start keeps the controller's queue to wake Kymas through, and watches the
// policy for changes until ctx ends.
func (m *Maintenance) Start(ctx context.Context, queue workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
	m.mu.Lock()
	m.queue = queue
	m.mu.Unlock()
	if m.policy != nil {
		go m.watchPolicy(ctx)
	}
	return nil
}

// watchPolicy wakes every held Kyma when the policy changes.
func (m *Maintenance) watchPolicy(ctx context.Context) {
	last, lastErr := m.policy.Load()
	tick := time.NewTicker(m.poll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		p, err := m.policy.Load()
		// Load returns the same policy and error values while the file is unchanged.
		if p == last && errors.Is(err, lastErr) {
			continue
		}
		last, lastErr = p, err
		if err != nil {
			m.log.Error(err, "the maintenance policy changed and is unusable: module upgrades that require downtime wait until it is fixed")
		} else {
			m.log.Info("the maintenance policy changed")
		}
		m.mu.Lock()
		for key := range m.held {
			m.queue.Add(reconcile.Request{NamespacedName: key})
		}
		clear(m.held)
		m.mu.Unlock()
	}
}

// load returns the policy as it is now; nil and no error without one.
func (m *Maintenance) load() (*maintenance.Policy, error) {
	if m.policy == nil {
		return nil, nil
	}
	return m.policy.Load()
}

// hold remembers key for the next policy change and, when at is set,
// enqueues it at that time: the begin of its window.
func (m *Maintenance) hold(key types.NamespacedName, at time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.held[key] = struct{}{}
	if m.queue != nil && !at.IsZero() {
		// The queue keeps the earliest time per Kyma: a hold per reconcile
		// costs nothing more.
		m.queue.AddAfter(reconcile.Request{NamespacedName: key}, at.Sub(m.now()))
	}
}

// holdForWindow returns why m is not installed over current yet: the
// offered version requires downtime and the runtime's maintenance window is
// closed. An error means the policy cannot tell: the installed version
// stays until the policy is fixed. A first install and a change that keeps
// the version never wait.
func (r *Reconciler) holdForWindow(ctx context.Context, kyma *v1beta2.Kyma, m *resolve.Module, current *v1beta2.Manifest) (string, error) {
	mt := r.Maintenance
	installed := ""
	if current != nil {
		installed = current.Spec.Version
	}
	if mt == nil || installed == m.Version {
		// Most reconciles change no version: no need to look at the policy.
		return "", nil
	}
	policy, loadErr := mt.load()
	d, err := maintenance.Decide(maintenance.Request{
		Now: mt.now(), Labels: kyma.Labels, SkipWindows: kyma.Spec.SkipMaintenanceWindows,
		Installed: installed, Offered: m.Version, RequiresDowntime: m.Template.Spec.RequiresDowntime,
	}, policy, loadErr)
	key := client.ObjectKeyFromObject(kyma)
	if err != nil {
		err = fmt.Errorf("upgrade from %s to %s not applied: %w; %s stays installed until the policy is fixed", installed, m.Version, err, installed)
		mt.hold(key, time.Time{})
		r.eventOnce(kyma, m.Name, err.Error(), corev1.EventTypeWarning, ReasonMaintenancePolicyUnusable)
		return "", err
	}
	log.FromContext(ctx).V(1).Info("maintenance window decision", "module", m.Name, "from", installed, "to", m.Version,
		"allowed", d.Allowed, "reason", d.Reason)
	if d.Allowed {
		return "", nil
	}
	source := "the policy's default window"
	if d.Rule != "" {
		source = "policy rule " + d.Rule
	}
	msg := fmt.Sprintf("upgrade from %s to %s waits for the maintenance window %s (%s): version %s requires downtime; "+
		"%s stays installed meanwhile; set spec.skipMaintenanceWindows to upgrade at once",
		installed, m.Version, d.Window, source, m.Version, installed)
	mt.hold(key, d.Window.Begin)
	// A planned wait, not a problem: a Normal Event.
	r.eventOnce(kyma, m.Name, msg, corev1.EventTypeNormal, ReasonWaitingForMaintenanceWindow)
	return msg, nil
}

// eventOnce records an Event when the module's last status did not say msg
// already: one Event per change, not per reconcile.
func (r *Reconciler) eventOnce(kyma *v1beta2.Kyma, module, msg, eventType, reason string) {
	if prev := previousStatus(kyma, module); prev != nil && prev.Message == msg {
		return
	}
	r.Events.Eventf(kyma, nil, eventType, reason, "InstallModule", "module %s: %s", module, msg)
}

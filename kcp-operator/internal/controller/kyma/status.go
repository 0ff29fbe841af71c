package kyma

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/pullsecret"
	"github.com/lifecycle-manager/kcp-operator/internal/recorder"
)

// statusToWrite is the status this reconcile writes: the desired one, with
// the conditions other controllers reported — or the stored one when the
// Kyma stays Processing and only its progress changed: a part done (a true
// condition reported) and, while the stored status is younger than the
// busy recheck's bound (12 × --requeue-busy), its modules installing or
// turning Ready. The write that ends the Processing carries it, or the
// first one past that bound: a module stuck installing says so in the
// Kyma then.
// A problem is written at once.
func (r *Reconciler) statusToWrite(kyma *v1beta2.Kyma, results []moduleResult) v1beta2.KymaStatus {
	conds, _ := r.Board.Merged(kyma)
	status := r.desiredStatus(kyma, results, conds)
	young := time.Since(kyma.Status.LastOperation.LastUpdateTime.Time) < r.Requeue.BusyMax
	if progressOnly(kyma.Status, status, young) {
		return kyma.Status
	}
	return status
}

// progressOnly reports whether next differs from stored only in progress
// of a Kyma that is Processing in both; with young, the progress of its
// modules counts too.
func progressOnly(stored, next v1beta2.KymaStatus, young bool) bool {
	if stored.State != shared.StateProcessing || next.State != shared.StateProcessing {
		return false
	}
	seen := next
	seen.LastOperation = stored.LastOperation // follows the module states
	modulesProgress := young && modulesProgressOnly(stored.Modules, next.Modules)
	if modulesProgress {
		seen.Modules = stored.Modules
	}
	seen.Conditions = make([]metav1.Condition, 0, len(next.Conditions))
	for _, c := range next.Conditions {
		old := meta.FindStatusCondition(stored.Conditions, c.Type)
		switch {
		case c.Type == v1beta2.ConditionModules && modulesProgress && old != nil && old.Status == c.Status:
			seen.Conditions = append(seen.Conditions, *old) // its message lists the modules not Ready
		case !isReported(c.Type) || c.Status != metav1.ConditionTrue:
			seen.Conditions = append(seen.Conditions, c)
		case old == nil:
			// reported done, not written yet: progress
		case old.Status == metav1.ConditionTrue:
			seen.Conditions = append(seen.Conditions, *old)
		default:
			seen.Conditions = append(seen.Conditions, c) // a recovery is news
		}
	}
	return sameStatus(stored, seen)
}

// modulesProgressOnly reports whether next differs from stored only in
// modules going on with their install: the same modules, each Processing
// or Ready in both, with another message or Manifest.
func modulesProgressOnly(stored, next []v1beta2.ModuleStatus) bool {
	if len(stored) != len(next) {
		return false
	}
	for i := range next {
		a, b := stored[i], next[i]
		if !installing(a.State) || !installing(b.State) {
			return false
		}
		a.State, a.Message, a.Manifest = b.State, b.Message, b.Manifest
		if !equality.Semantic.DeepEqual(a, b) {
			return false
		}
	}
	return true
}

func installing(s shared.State) bool { return s == shared.StateProcessing || s == shared.StateReady }

// isReported tells the conditions other controllers report.
func isReported(typ string) bool {
	return typ != v1beta2.ConditionModules && typ != v1beta2.ConditionRuntime
}

// desiredStatus computes the Kyma status from the module results; conds,
// the conditions of other controllers among them, are kept and count
// towards the state.
func (r *Reconciler) desiredStatus(kyma *v1beta2.Kyma, results []moduleResult, conds []metav1.Condition) v1beta2.KymaStatus {
	kept := kyma.Status
	kept.Modules = nil // rebuilt below, so not worth a deep copy
	kept.Conditions = conds
	status := *kept.DeepCopy()
	status.Modules = make([]v1beta2.ModuleStatus, 0, len(results))
	states := make([]shared.State, 0, len(results))
	var notReady []string
	for _, res := range results {
		ms := moduleStatus(res)
		status.Modules = append(status.Modules, ms)
		if ms.State == shared.StateDeleting {
			states = append(states, shared.StateProcessing) // a module leaves; the Kyma stays
		} else {
			states = append(states, ms.State)
		}
		if ms.State != shared.StateReady && ms.State != shared.StateUnmanaged {
			notReady = append(notReady, fmt.Sprintf("%s (%s)", ms.Name, ms.State))
		}
	}
	setCondition(&status, kyma.Generation, v1beta2.ConditionRuntime, true, "Reachable", "the runtime API server answers")
	if len(notReady) == 0 {
		setCondition(&status, kyma.Generation, v1beta2.ConditionModules, true, "Ready", "all modules are ready")
	} else {
		setCondition(&status, kyma.Generation, v1beta2.ConditionModules, false, "NotReady",
			"modules not ready: "+strings.Join(notReady, ", "))
	}
	r.signatureCondition(kyma, &status, results)
	descriptorCondition(kyma, &status, results)
	states = append(states, conditionStates(status.Conditions)...)
	waiting := falseConditions(status.Conditions)
	for _, typ := range r.Required {
		if meta.FindStatusCondition(status.Conditions, typ) == nil {
			states = append(states, shared.StateProcessing)
			waiting = append(waiting, typ+" (not reported yet)")
		}
	}
	status.State = shared.Worst(states...)
	status.ActiveChannel = kyma.EffectiveChannel(v1beta2.Module{})
	switch {
	case status.State == shared.StateReady:
		status.LastOperation = keepOrNew(kyma.Status.LastOperation, "Kyma is ready")
	case len(notReady) > 0:
		status.LastOperation = keepOrNew(kyma.Status.LastOperation, "waiting for modules: "+strings.Join(notReady, ", "))
	default:
		status.LastOperation = keepOrNew(kyma.Status.LastOperation, "waiting for: "+strings.Join(waiting, ", "))
	}
	return status
}

func moduleStatus(res moduleResult) v1beta2.ModuleStatus {
	ms := v1beta2.ModuleStatus{Name: res.listed.Name, Channel: res.listed.Channel}
	if m := res.resolved; m != nil {
		ms.FQDN, ms.OCMComponentName, ms.Channel, ms.Version = m.FQDN, m.FQDN, m.Channel, m.Version
		ms.Template = tracking(m.Template, v1beta2.ModuleTemplateKind)
		if data := m.Template.Spec.Data; data != nil {
			ms.Resource = &v1beta2.TrackingObject{
				TypeMeta:    metav1.TypeMeta{APIVersion: data.GetAPIVersion(), Kind: data.GetKind()},
				PartialMeta: v1beta2.PartialMeta{Name: data.GetName(), Namespace: data.GetNamespace()},
			}
		}
	}
	switch {
	case res.leaving:
		ms.Manifest = tracking(res.manifest, v1beta2.ManifestKind)
		ms.Version = res.manifest.Spec.Version
		ms.State, ms.Message = leavingState(res.manifest)
	case res.err != nil:
		if res.manifest != nil { // what stays installed
			ms.Manifest = tracking(res.manifest, v1beta2.ManifestKind)
			ms.Version = res.manifest.Spec.Version
		}
		ms.State, ms.Message = shared.StateError, res.err.Error()
	case !res.listed.IsManaged():
		ms.State, ms.Message = shared.StateUnmanaged, "not managed: its resources stay in the runtime untouched"
	case res.held != "":
		// What runs is the installed version, not the one the channel offers.
		ms.Manifest = tracking(res.manifest, v1beta2.ManifestKind)
		ms.Version = res.manifest.Spec.Version
		ms.State, ms.Message = shared.StateWarning, res.held
		if res.maintenance {
			// A release that requires downtime must not paint the fleet
			// yellow: the wait shows in maintenance and the message only.
			ms.State, ms.Maintenance = shownState(res.manifest), true
		}
	case res.manifest == nil:
		ms.State, ms.Message = shared.StateProcessing, "waiting for its Manifest"
	default:
		ms.Manifest = tracking(res.manifest, v1beta2.ManifestKind)
		ms.State = shownState(res.manifest)
		if ms.State != shared.StateReady {
			ms.Message = res.manifest.Status.LastOperation.Operation
		}
	}
	return ms
}

// leavingState is the state of a module being removed: Deleting, or the
// trouble its Manifest reports (a removal that waits for users' data).
// Until the Manifest controller has seen the deletion, its status tells of
// the install.
func leavingState(mf *v1beta2.Manifest) (shared.State, string) {
	switch st, msg := mf.Status.State, mf.Status.LastOperation.Operation; {
	case mf.DeletionTimestamp.IsZero() || msg == "":
		return shared.StateDeleting, "being removed from the runtime"
	case st == shared.StateWarning || st == shared.StateError || st == shared.StateDeleting:
		return st, msg
	default:
		return shared.StateDeleting, "being removed from the runtime"
	}
}

// observed reports whether the Manifest controller's conditions describe
// the Manifest's current generation.
func observed(mf *v1beta2.Manifest) bool {
	for _, c := range mf.Status.Conditions {
		if c.ObservedGeneration < mf.Generation {
			return false
		}
	}
	return true
}

func tracking(obj client.Object, kind string) *v1beta2.TrackingObject {
	return &v1beta2.TrackingObject{
		TypeMeta:    metav1.TypeMeta{APIVersion: v1beta2.GroupVersion.String(), Kind: kind},
		PartialMeta: v1beta2.PartialMeta{Name: obj.GetName(), Namespace: obj.GetNamespace(), Generation: obj.GetGeneration()},
	}
}

// conditionStates maps conditions to states: a false condition whose
// reason says Error counts as Error, any other false one as Processing.
func conditionStates(conds []metav1.Condition) []shared.State {
	var out []shared.State
	for _, c := range conds {
		switch {
		case c.Status == metav1.ConditionTrue || c.Type == v1beta2.ConditionModules:
			// modules count through their own states
		case strings.Contains(c.Reason, "Error") || c.Reason == "Unreachable":
			out = append(out, shared.StateError)
		case strings.Contains(c.Reason, "Warning"):
			out = append(out, shared.StateWarning)
		default:
			out = append(out, shared.StateProcessing)
		}
	}
	return out
}

func falseConditions(conds []metav1.Condition) []string {
	var out []string
	for _, c := range conds {
		if c.Status != metav1.ConditionTrue {
			out = append(out, fmt.Sprintf("%s (%s)", c.Type, c.Message))
		}
	}
	return out
}

func setCondition(status *v1beta2.KymaStatus, generation int64, typ string, ok bool, reason, msg string) {
	c := metav1.Condition{
		Type: typ, Status: metav1.ConditionFalse, Reason: reason, Message: msg, ObservedGeneration: generation,
		LastTransitionTime: now(),
	}
	if ok {
		c.Status = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&status.Conditions, c)
}

func lastOperation(msg string) shared.LastOperation {
	return shared.LastOperation{Operation: msg, LastUpdateTime: now()}
}

// now is the current time at the precision the API server stores, so that a
// status read back compares equal to the one written.
func now() metav1.Time { return metav1.NewTime(time.Now().Truncate(time.Second)) }

// keepOrNew keeps the time of an unchanged message, so that an unchanged
// status causes no write.
func keepOrNew(old shared.LastOperation, msg string) shared.LastOperation {
	if old.Operation == msg {
		return old
	}
	return lastOperation(msg)
}

// ownConditions are the condition types this controller writes: its own
// and those other controllers report through the Board.
var ownConditions = []string{v1beta2.ConditionModules, v1beta2.ConditionRuntime,
	v1beta2.ConditionModuleCatalog, v1beta2.ConditionSKRWebhook, ConditionModuleSignatures, ConditionModuleDescriptors,
	pullsecret.Condition}

// writeStatus applies status to the KCP Kyma when it changed. It is the
// only place that writes the KCP Kyma's status.
func (r *Reconciler) writeStatus(ctx context.Context, kyma *v1beta2.Kyma, status v1beta2.KymaStatus) error {
	old := kyma.Status
	if !sameStatus(old, status) {
		if err := applyStatus(ctx, r.KCP, kyma.Namespace, kyma.Name, status, ownConditions); err != nil {
			return fmt.Errorf("writing the status of Kyma %s/%s: %w", kyma.Namespace, kyma.Name, err)
		}
		kyma.Status = status
		r.recordTransition(kyma, old, status)
	}
	r.Metrics.observeStatus(kyma, status)
	return nil
}

// sameStatus compares two statuses semantically (quantities and times by
// value). The plain comparison first is only a shortcut: it is several
// times cheaper and whatever it finds equal is semantically equal too.
func sameStatus(a, b v1beta2.KymaStatus) bool {
	return reflect.DeepEqual(a, b) || equality.Semantic.DeepEqual(a, b)
}

// applyStatus server-side applies the status fields this controller owns,
// and of the conditions only the given types.
func applyStatus(ctx context.Context, c client.Client, ns, name string, status v1beta2.KymaStatus, conditions []string) error {
	status.Conditions = slices.DeleteFunc(slices.Clone(status.Conditions), func(cond metav1.Condition) bool {
		return !slices.Contains(conditions, cond.Type)
	})
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&v1beta2.Kyma{Status: status})
	if err != nil {
		return fmt.Errorf("encoding the status: %w", err)
	}
	u := &unstructured.Unstructured{Object: map[string]any{"status": obj["status"]}}
	u.SetAPIVersion(v1beta2.GroupVersion.String())
	u.SetKind(v1beta2.KymaKind)
	u.SetNamespace(ns)
	u.SetName(name)
	return c.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(StatusOwner), client.ForceOwnership)
}

func (r *Reconciler) recordTransition(kyma *v1beta2.Kyma, old, now v1beta2.KymaStatus) {
	if !recorder.Problem(old.State, now.State) && !recorder.Settled(old.State, now.State) {
		return
	}
	kind := corev1.EventTypeNormal
	if now.State == shared.StateError || now.State == shared.StateWarning {
		kind = corev1.EventTypeWarning
	}
	r.Events.Eventf(kyma, nil, kind, "State"+string(now.State), "Reconcile", "%s -> %s: %s",
		stateOrNone(old.State), now.State, now.LastOperation.Operation)
}

func stateOrNone(s shared.State) string {
	if s == "" {
		return "(none)"
	}
	return string(s)
}

package manifest

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/remote"
)

// observation is what a reconcile found; writeStatus turns it into status.
type observation struct {
	state      shared.State
	message    string
	conditions []metav1.Condition
	// synced replaces status.synced unless keepSynced is set.
	synced     []shared.Resource
	keepSynced bool
	// applied replaces status.applied unless empty.
	applied string
	// created replaces status.created when setCreated is set.
	created    []v1beta2.CreatedResource
	setCreated bool
}

func condition(typ string, ok bool, reason, msg string) metav1.Condition {
	c := metav1.Condition{Type: typ, Status: metav1.ConditionFalse, Reason: reason, Message: msg}
	if ok {
		c.Status = metav1.ConditionTrue
	}
	return c
}

// failed is the observation of a step that could not be done; status.synced stays.
func failed(_ *v1beta2.Manifest, typ, reason string, err error) observation {
	return observation{
		state: shared.StateError, message: err.Error(), keepSynced: true,
		conditions: []metav1.Condition{condition(typ, false, reason, err.Error())},
	}
}

// install renders the module, applies it unless it is in place, prunes what
// went away, creates the default CR and observes readiness.
func (r *Reconciler) install(ctx context.Context, mf *v1beta2.Manifest, rt *remote.Runtime) (observation, error) {
	rendered, err := r.Source.Render(ctx, mf, Target{Namespace: rt.Namespace, Namespaced: namespacedIn(rt)})
	if err != nil {
		return failed(mf, v1beta2.ConditionResources, renderReason(err), err), nil
	}
	if err := r.Policy.Check(moduleName(mf), rendered.Objects); err != nil {
		return failed(mf, v1beta2.ConditionResources, ReasonContentDenied, err), nil
	}
	if obs, refused := r.refuseDefaultCR(mf, rendered.Objects); refused {
		return obs, nil
	}
	synced := resourcesOf(rendered.Objects)
	record := appliedRecord(mf)
	renderHash, fingerprint, _ := strings.Cut(record, "/")
	var (
		stored  *versionSet
		inPlace bool
		done    *applyOutcome
	)
	if renderHash == rendered.Hash {
		if stored, inPlace, err = r.inPlace(ctx, rt, rendered.Objects, fingerprint, r.held.pending(mf)); err != nil {
			return failed(mf, v1beta2.ConditionResources, "RuntimeUnreachable", err), err
		}
	}
	if !inPlace {
		placed := keys(mf.Status.Synced)
		if err := r.recordBefore(ctx, mf, synced, rendered.Hash); err != nil {
			return failed(mf, v1beta2.ConditionResources, "RecordFailed", err), err
		}
		if stored, done, err = r.apply(ctx, rt, mf, rendered.Objects, placed); err != nil {
			return done.onto(applyFailed(mf, synced, err)), err
		}
		if err := r.prune(ctx, rt, mf, synced, done); err != nil {
			return done.onto(failed(mf, v1beta2.ConditionResources, "PruneFailed", err)), err
		}
		r.Metrics.applied(len(rendered.Objects))
		for _, msg := range rendered.Ignored {
			r.event(mf, true, ReasonConfigIgnored, msg)
		}
		if record != "" && !done.refusedAny() {
			// A first install is told by the Kyma's Ready Event; this one
			// changed a module that was in place (new version, drift repaired).
			r.event(mf, false, "Applied", fmt.Sprintf("applied %d objects of version %s", len(rendered.Objects), mf.Spec.Version))
		}
		record = rendered.Hash + "/" + done.fingerprint(stored)
	}
	synced = done.synced(mf, synced)
	obs := done.onto(observation{synced: synced, applied: record, conditions: []metav1.Condition{
		condition(v1beta2.ConditionResources, true, "Applied", fmt.Sprintf("%d objects in place", len(synced))),
	}})
	crState, crMsg, err := r.moduleCR(ctx, mf, rt, done)
	if err != nil {
		return withFailure(obs, v1beta2.ConditionModuleCR, "ModuleCRFailed", err), err
	}
	workState, workMsg, err := workloads(ctx, mf, rt, rendered.Objects, stored)
	if err != nil {
		return withFailure(obs, v1beta2.ConditionInstallation, "ReadinessUnknown", err), err
	}
	return r.warn(mf, done, readiness(obs, mf.Spec.Resource != nil, crState, crMsg, workState, workMsg)), nil
}

// applyFailed is the observation of an apply that failed part way. Where
// no record was written before it (a first install), its status records
// what it was to place, so that no later change of the render hides any
// of it from deletion and prune.
func applyFailed(mf *v1beta2.Manifest, rendered []shared.Resource, err error) observation {
	obs := failed(mf, v1beta2.ConditionResources, "ApplyFailed", err)
	if len(mf.Status.Synced) == 0 {
		obs.synced, obs.keepSynced = rendered, false
	}
	return obs
}

func withFailure(obs observation, typ, reason string, err error) observation {
	obs.state, obs.message = shared.StateError, err.Error()
	obs.conditions = append(obs.conditions, condition(typ, false, reason, err.Error()))
	return obs
}

// readiness folds the default CR's state and the workloads' into the observation.
func readiness(obs observation, hasCR bool, crState shared.State, crMsg string, work shared.State, workMsg string) observation {
	if hasCR {
		obs.conditions = append(obs.conditions, condition(v1beta2.ConditionModuleCR, crState == shared.StateReady, "State"+string(crState), crMsg))
	} else {
		obs.conditions = append(obs.conditions, condition(v1beta2.ConditionModuleCR, true, "NoModuleCR", "the module has no default CR"))
	}
	obs.conditions = append(obs.conditions, condition(v1beta2.ConditionInstallation, work == shared.StateReady, "Workloads"+string(work), workMsg))
	obs.state = work
	obs.message = workMsg
	if hasCR {
		// With a default CR, the module's own operator reports the state.
		obs.state, obs.message = crState, crMsg
		if crState == shared.StateReady && work != shared.StateReady {
			obs.state, obs.message = work, workMsg
		}
	}
	return obs
}

// moduleCR creates the default CR once its CRD serves it and is the
// module's, and reads its state.
func (r *Reconciler) moduleCR(ctx context.Context, mf *v1beta2.Manifest, rt *remote.Runtime, done *applyOutcome) (shared.State, string, error) {
	if mf.Spec.Resource == nil {
		return shared.StateReady, "", nil
	}
	desired := mf.Spec.Resource.DeepCopy()
	if desired.GetNamespace() == "" {
		namespaced, err := namespacedIn(rt)(desired.GroupVersionKind())
		if err != nil {
			return shared.StateProcessing, "", err
		}
		if namespaced {
			desired.SetNamespace(rt.Namespace)
		}
	}
	got, err := readPast(ctx, rt, desired, true, false)
	current, _ := got.(*unstructured.Unstructured)
	switch {
	case apierrors.IsNotFound(err):
		if mf.Spec.CustomResourcePolicy == v1beta2.CustomResourcePolicyIgnore {
			return shared.StateProcessing, "waiting for the module's CR to be created by the user", nil
		}
		if crd, held := done.heldCRD(desired.GroupVersionKind().GroupKind()); held {
			return shared.StateProcessing, "module CR " + describe(desired) + " not created while " + crd.text, nil
		}
		labels := desired.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[shared.ManagedByLabel] = shared.OperatorName
		desired.SetLabels(labels)
		if err := rt.Create(ctx, desired); err != nil && !apierrors.IsAlreadyExists(err) {
			return shared.StateProcessing, "", fmt.Errorf("creating the module CR %s: %w", describe(desired), err)
		}
		return shared.StateProcessing, "module CR " + describe(desired) + " created; waiting for its status", nil
	case meta.IsNoMatchError(err):
		return shared.StateProcessing, "waiting for the CRD of " + desired.GetKind(), nil
	case err != nil:
		return shared.StateProcessing, "", fmt.Errorf("reading the module CR %s: %w", describe(desired), err)
	}
	return moduleState(current, mf.Spec.CustomStateCheck)
}

// crState maps the status.state a module operator reports.
func crState(cr *unstructured.Unstructured) (shared.State, string, error) {
	state, _, _ := unstructured.NestedString(cr.Object, "status", "state")
	name := describe(cr)
	switch s := shared.State(state); s {
	case shared.StateReady:
		return s, name + " is Ready", nil
	case shared.StateWarning, shared.StateError, shared.StateDeleting, shared.StateProcessing:
		return s, name + " reports " + state + crConditionMessage(cr), nil
	case "":
		return shared.StateProcessing, name + " has no status.state yet", nil
	default:
		return shared.StateWarning, fmt.Sprintf("%s reports the unknown state %q", name, state), nil
	}
}

// crConditionMessage quotes the first false condition of a module CR, which
// usually says why it is not Ready.
func crConditionMessage(cr *unstructured.Unstructured) string {
	conds, _, _ := unstructured.NestedSlice(cr.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok || m["status"] == "True" {
			continue
		}
		if msg, ok := m["message"].(string); ok && msg != "" {
			return ": " + msg
		}
	}
	return ""
}

// appliedRecord is what was last applied: status.applied, or the
// annotation where operators before status.applied kept it.
func appliedRecord(mf *v1beta2.Manifest) string {
	if mf.Status.Applied != "" {
		return mf.Status.Applied
	}
	return mf.Annotations[shared.AppliedAnnotation]
}

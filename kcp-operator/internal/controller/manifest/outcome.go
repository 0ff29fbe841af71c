package manifest

import (
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/removal"
)

// applyOutcome is what an apply learnt besides the stored versions: the
// namespaces the module created, the objects it refused to take over from
// their owners, and what the prune after it kept. A nil outcome (nothing
// applied) changes nothing.
type applyOutcome struct {
	mu      sync.Mutex
	created []v1beta2.CreatedResource
	refused []refusal
	kept    []removal.Kept
	// heldKinds are the kinds whose CRDs the module renders but others
	// hold, each with the CRD's refusal.
	heldKinds map[schema.GroupKind]refusal
}

// refusal is an object not applied because someone else owns it.
type refusal struct {
	key, text string
	// leaving: its owner is deleting it, so the module waits for it
	// instead of warning.
	leaving bool
}

func newOutcome(created []v1beta2.CreatedResource) *applyOutcome {
	return &applyOutcome{created: slices.Clone(created)}
}

// namespace records an applied namespace: created with uid by this apply, or
// found in place with applied as its UID — then an earlier record of it
// stands only while the UID is the one the module created.
func (a *applyOutcome) namespace(res shared.Resource, created, applied types.UID) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.created = slices.DeleteFunc(a.created, func(c v1beta2.CreatedResource) bool {
		return removal.Key(c.Resource) == removal.Key(res) && (created != "" || c.UID != applied)
	})
	if created != "" {
		a.created = append(a.created, v1beta2.CreatedResource{Resource: res, UID: created})
	}
}

// refuse records o as not applied, for the reason text.
func (a *applyOutcome) refuse(o *unstructured.Unstructured, text string, leaving bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	res := resourcesOf([]*unstructured.Unstructured{o})[0]
	r := refusal{key: removal.Key(res), text: text, leaving: leaving}
	a.refused = append(a.refused, r)
	if isCRD(o.GroupVersionKind()) {
		group, _, _ := unstructured.NestedString(o.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(o.Object, "spec", "names", "kind")
		if a.heldKinds == nil {
			a.heldKinds = map[schema.GroupKind]refusal{}
		}
		a.heldKinds[schema.GroupKind{Group: group, Kind: kind}] = r
	}
}

// heldCRD returns the refusal of the CRD of gk when the module renders it
// and someone else holds it, else false. The module's objects of gk would
// become instances of another owner's CRD (another module's, being
// removed, would then wait for them as its users' data), so they wait
// until the CRD is the module's.
func (a *applyOutcome) heldCRD(gk schema.GroupKind) (refusal, bool) {
	if a == nil {
		return refusal{}, false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	r, ok := a.heldKinds[gk]
	return r, ok
}

func (a *applyOutcome) refusedAny() bool { return a != nil && len(a.refused) > 0 }

// fingerprint is the applied record's second part: with refused objects
// one no read matches, so that every reconcile tries them again.
func (a *applyOutcome) fingerprint(stored *versionSet) string {
	if a.refusedAny() {
		return "refused-" + stored.fingerprint()
	}
	return stored.fingerprint()
}

// synced is what the module holds in the runtime now: the rendered objects
// but those refused, and what the prune kept pending (a CRD whose CRs
// remain). Without an apply, what an earlier prune kept is held on to.
func (a *applyOutcome) synced(mf *v1beta2.Manifest, rendered []shared.Resource) []shared.Resource {
	out := slices.Clone(rendered)
	now := keys(rendered)
	if a == nil {
		for _, res := range mf.Status.Synced {
			if !now[removal.Key(res)] {
				out = append(out, res)
			}
		}
		return out
	}
	out = slices.DeleteFunc(out, func(res shared.Resource) bool {
		return slices.ContainsFunc(a.refused, func(r refusal) bool { return r.key == removal.Key(res) })
	})
	for _, k := range a.kept {
		if k.Pending && !now[removal.Key(k.Resource)] {
			out = append(out, k.Resource)
		}
	}
	return out
}

// onto records the created namespaces in the observation; one that replaces
// status.synced keeps only the records of what it lists.
func (a *applyOutcome) onto(obs observation) observation {
	if a == nil {
		return obs
	}
	created := slices.Clone(a.created)
	if !obs.keepSynced {
		held := keys(obs.synced)
		created = slices.DeleteFunc(created, func(c v1beta2.CreatedResource) bool { return !held[removal.Key(c.Resource)] })
	}
	obs.created, obs.setCreated = created, true
	return obs
}

// warn makes the module Warning, naming the owners of the objects it did
// not apply, and tells it in an Event when that is news. When every such
// object is being deleted by its owner (a module removed just before this
// one came), the module is Processing instead: it waits for them.
func (r *Reconciler) warn(mf *v1beta2.Manifest, a *applyOutcome, obs observation) observation {
	if !a.refusedAny() {
		return obs
	}
	texts := make([]string, 0, len(a.refused))
	waiting := true
	for _, r := range a.refused {
		texts = append(texts, r.text)
		waiting = waiting && r.leaving
	}
	slices.Sort(texts)
	obs.conditions = slices.DeleteFunc(obs.conditions, func(c metav1.Condition) bool { return c.Type == v1beta2.ConditionResources })
	if waiting {
		msg := "waiting for objects their owners are deleting: " + strings.Join(texts, "; ")
		obs.conditions = append(obs.conditions, condition(v1beta2.ConditionResources, false, "HeldByLeavingOwners", msg))
		if obs.state == shared.StateReady || obs.state == shared.StateProcessing {
			obs.state, obs.message = shared.StateProcessing, msg
		}
		return obs
	}
	msg := "not applied, to leave them to their owners: " + strings.Join(texts, "; ")
	obs.conditions = append(obs.conditions, condition(v1beta2.ConditionResources, false, "OwnedByOthers", msg))
	if obs.state != shared.StateError {
		obs.state, obs.message = shared.StateWarning, msg
	}
	if c := meta.FindStatusCondition(mf.Status.Conditions, v1beta2.ConditionResources); c == nil || c.Message != msg {
		r.event(mf, true, "OwnedByOthers", msg)
	}
	return obs
}

func keys(resources []shared.Resource) map[string]bool {
	out := make(map[string]bool, len(resources))
	for _, r := range resources {
		out[removal.Key(r)] = true
	}
	return out
}

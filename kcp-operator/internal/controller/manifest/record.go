package manifest

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/removal"
)

// ReasonApplying is the Resources condition's reason while the objects
// status.synced lists are being applied: the record was written first.
const ReasonApplying = "Applying"

// recordBefore writes the Manifest status before an apply that may place
// objects status.synced does not list yet: synced becomes the union of
// what it listed and what is rendered. What the apply creates is then on
// record before it exists, so an apply that fails part way, a crash, a
// lost lease or a failover after this write leaves nothing that prune and
// deletion do not know of; the status after the apply narrows synced to
// what the module holds. The union may list objects the apply then
// refuses to take over: removal deletes only objects that carry the
// module's labels, so such a record deletes nothing of theirs.
//
// It writes only when the render is not the one last applied and the set
// of objects grows: an unchanged render, a repaired drift or a render
// whose new objects are all refused costs no write. A first install
// (nothing recorded yet) writes none either: every object it places
// carries its ManifestLabel, by which deletion finds them in the whole
// runtime (inventory), and the render of a later apply still has what a
// first apply that stopped part way placed, by kind. From then on the
// record is written: an upgrade's render no longer names what the
// earlier one placed.
func (r *Reconciler) recordBefore(ctx context.Context, mf *v1beta2.Manifest, rendered []shared.Resource, renderHash string) error {
	applied, _, _ := strings.Cut(appliedRecord(mf), "/")
	if applied == renderHash || nothingRecorded(mf) {
		return nil
	}
	union, grows := unionOf(mf.Status.Synced, rendered)
	if !grows {
		return nil
	}
	msg := fmt.Sprintf("applying %d objects of version %s", len(rendered), mf.Spec.Version)
	obs := observation{state: shared.StateProcessing, message: msg, synced: union,
		conditions: []metav1.Condition{condition(v1beta2.ConditionResources, false, ReasonApplying, msg)}}
	if err := r.writeStatus(ctx, mf, obs); err != nil {
		return fmt.Errorf("recording the objects before applying them: %w", err)
	}
	return nil
}

// unionOf is recorded followed by what of rendered it does not list, and
// whether that is anything.
func unionOf(recorded, rendered []shared.Resource) ([]shared.Resource, bool) {
	have := keys(recorded)
	out := slices.Clone(recorded)
	for _, res := range rendered {
		if !have[removal.Key(res)] {
			have[removal.Key(res)] = true
			out = append(out, res)
		}
	}
	return out, len(out) > len(recorded)
}

// nothingRecorded reports whether mf has no record of a placement yet:
// no synced object, no created namespace, no applied render.
func nothingRecorded(mf *v1beta2.Manifest) bool {
	return len(mf.Status.Synced) == 0 && len(mf.Status.Created) == 0 && appliedRecord(mf) == ""
}

// recordedFirst reports whether status is the one recordBefore wrote: the
// apply it announced has not been reported yet.
func recordedFirst(status v1beta2.ManifestStatus) bool {
	c := meta.FindStatusCondition(status.Conditions, v1beta2.ConditionResources)
	return c != nil && c.Reason == ReasonApplying
}

// sameHoldings reports whether two statuses record the same objects and
// the same created namespaces, in any order.
func sameHoldings(a, b v1beta2.ManifestStatus) bool {
	if len(a.Synced) != len(b.Synced) || len(a.Created) != len(b.Created) {
		return false
	}
	inA := keys(a.Synced)
	for _, res := range b.Synced {
		if !inA[removal.Key(res)] {
			return false
		}
	}
	for _, c := range b.Created {
		if !slices.ContainsFunc(a.Created, func(o v1beta2.CreatedResource) bool {
			return removal.Key(o.Resource) == removal.Key(c.Resource) && o.UID == c.UID
		}) {
			return false
		}
	}
	return true
}

package removal

import (
	"strings"

	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/contentpolicy"
)

// appliedCRDGroup reports whether the Manifest's default CR is of the group
// of a CRD the module applied (status.synced names CRDs <plural>.<group>),
// a group that is not Kubernetes' own. The install refuses any other
// default CR and never creates it; the object it names, a Namespace say, is
// someone else's, and neither removal nor purge may delete it.
func appliedCRDGroup(mf *v1beta2.Manifest) bool {
	group := mf.Spec.Resource.GroupVersionKind().Group
	if contentpolicy.ReservedGroup(group) {
		return false
	}
	for _, res := range mf.Status.Synced {
		if _, g, ok := strings.Cut(res.Name, "."); ok && IsCRD(res) && g == group {
			return true
		}
	}
	return false
}

package manifest

import (
	"errors"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/contentpolicy"
)

// ReasonModuleCRNotShipped is the ModuleCR condition's reason for a default
// CR of a kind that no CRD of the module defines; nothing of the module is
// applied.
const ReasonModuleCRNotShipped = "ModuleCRNotShipped"

// refuseDefaultCR checks the default CR (spec.resource) before anything of
// the module is applied: the operator creates it with its own credentials,
// and removing the module deletes what it names. It must be of a kind one
// of the module's rendered CRDs defines, and pass the content policy as a
// rendered object would. A refused default CR fails the ModuleCR condition
// with the reason and the rule.
func (r *Reconciler) refuseDefaultCR(mf *v1beta2.Manifest, rendered []*unstructured.Unstructured) (observation, bool) {
	cr := mf.Spec.Resource
	if cr == nil {
		return observation{}, false
	}
	module := moduleName(mf)
	err := contentpolicy.CheckShipped(module, cr, rendered)
	if err == nil {
		err = r.Policy.CheckDefaultCR(module, cr, rendered)
	}
	if err == nil {
		return observation{}, false
	}
	reason := ReasonContentDenied
	var notShipped *contentpolicy.NotShippedError
	if errors.As(err, &notShipped) {
		reason = ReasonModuleCRNotShipped
	}
	return failed(mf, v1beta2.ConditionModuleCR, reason, err), true
}

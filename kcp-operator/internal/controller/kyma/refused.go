package kyma

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/remote"
)

// warnRefused records a Warning Event when kyma's runtime kubeconfig is
// refused and its Runtime condition does not say so already: whoever
// wrote the Secret learns why, once per refusal and not per reconcile.
func (r *Reconciler) warnRefused(kyma *v1beta2.Kyma, cause error) {
	if !remote.Refused(cause) {
		return
	}
	if c := meta.FindStatusCondition(kyma.Status.Conditions, v1beta2.ConditionRuntime); c != nil &&
		c.Reason == remote.ReasonKubeconfigRefused && c.Message == cause.Error() {
		return
	}
	r.Events.Eventf(kyma, nil, corev1.EventTypeWarning, remote.ReasonKubeconfigRefused, "ConnectRuntime", "%s", cause.Error())
}

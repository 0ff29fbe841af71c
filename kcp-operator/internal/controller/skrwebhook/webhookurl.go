package skrwebhook

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lifecycle-manager/api/v1beta2"
)

// ReasonWebhookURLRefused is the SKRWebhook condition's reason for an
// agent that runs, and the reason of the Warning Event, when the Kyma's
// agent-webhook-url annotation was ignored.
const ReasonWebhookURLRefused = "AgentWebhookURLRefused"

// reportRefusedURL puts an ignored agent-webhook-url annotation into the
// condition, and makes a Warning Event the first time it is reported: the
// annotation would have the runtime's API server send AdmissionReviews,
// Secret bodies included, to a URL of the Kyma writer's choosing, so an
// ignored one is worth someone's attention. The agent is installed as if
// the annotation were not there. An agent still starting up keeps its
// reason, which the startup delay depends on.
func (r *Reconciler) reportRefusedURL(kyma *v1beta2.Kyma, cond metav1.Condition, refused string) metav1.Condition {
	if refused == "" {
		return cond
	}
	cond.Message = refused + "; the agent is installed without it. " + cond.Message
	if cond.Status == metav1.ConditionTrue {
		cond.Reason = ReasonWebhookURLRefused
	}
	cur := r.Board.Find(kyma, v1beta2.ConditionSKRWebhook)
	if r.Events != nil && (cur == nil || !strings.Contains(cur.Message, refused)) {
		r.Events.Eventf(kyma, nil, corev1.EventTypeWarning, ReasonWebhookURLRefused, "InstallAgent", "%s", refused)
	}
	return cond
}

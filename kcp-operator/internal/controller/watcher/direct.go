package watcher

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lifecycle-manager/api/v1beta2"
)

// Reasons of the VirtualService condition.
const (
	ReasonConfigured = "Configured"
	ReasonError      = "Error"
	// ReasonDirectMode: the listener is reached without a route.
	ReasonDirectMode = "DirectMode"
)

// directCondition is a Watcher's VirtualService condition in direct mode:
// none is needed, unless the Watcher names no manager to route events to.
func directCondition(w *v1beta2.Watcher) metav1.Condition {
	if w.ManagerName() == "" {
		return virtualServiceCondition(w, errNoManager())
	}
	return metav1.Condition{Type: v1beta2.ConditionVirtualService, Status: metav1.ConditionFalse, Reason: ReasonDirectMode,
		Message: "the listener terminates mTLS itself (--listener-mode=direct): agents send " +
			strings.Join(EventPaths(w.ManagerName()), ", ") + " to it without a VirtualService"}
}

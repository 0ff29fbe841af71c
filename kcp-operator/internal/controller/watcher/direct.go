package watcher

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
)

// Reasons of the VirtualService condition.
const (
	ReasonConfigured = "Configured"
	ReasonError      = "Error"
	// ReasonDirectMode: the listener is reached without a route.
	ReasonDirectMode = "DirectMode"
)

// reconcileDirect gives a Watcher its status in direct mode, and lets a
// Watcher in deletion go: a finalizer left from a gateway-mode run is
// removed without touching Istio objects, whose CRDs may be gone.
func (r *Reconciler) reconcileDirect(ctx context.Context, w *v1beta2.Watcher) error {
	if !w.DeletionTimestamp.IsZero() {
		if !controllerutil.ContainsFinalizer(w, shared.WatcherFinalizer) {
			return nil
		}
		patch := client.MergeFrom(w.DeepCopy())
		controllerutil.RemoveFinalizer(w, shared.WatcherFinalizer)
		if err := r.KCP.Patch(ctx, w, patch); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("removing the finalizer of Watcher %s: %w", w.Name, err)
		}
		return nil
	}
	cond := metav1.Condition{Type: v1beta2.ConditionVirtualService, Status: metav1.ConditionFalse, Reason: ReasonDirectMode,
		Message: "the listener terminates mTLS itself (--listener-mode=direct): agents send " +
			strings.Join(EventPaths(w.ManagerName()), ", ") + " to it without a VirtualService"}
	if w.ManagerName() == "" {
		cond.Reason, cond.Message = ReasonError, fmt.Sprintf("the Watcher names no manager: set spec.manager or the %s label", shared.ManagedByLabel)
	}
	return r.writeStatus(ctx, w, cond)
}

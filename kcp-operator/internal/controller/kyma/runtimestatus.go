package kyma

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/remote"
)

// mirrorStatus writes the KCP status, as the runtime sees it (forRuntime),
// to the runtime Kyma when it differs from remoteKyma, the runtime Kyma as
// this reconcile read it.
func mirrorStatus(ctx context.Context, rt *remote.Runtime, remoteKyma *v1beta2.Kyma, status v1beta2.KymaStatus) error {
	return writeRuntimeStatus(ctx, rt, remoteKyma, forRuntime(status, rt.Namespace))
}

func writeRuntimeStatus(ctx context.Context, rt *remote.Runtime, remoteKyma *v1beta2.Kyma, status v1beta2.KymaStatus) error {
	if sameStatus(remoteKyma.Status, status) {
		return nil
	}
	all := make([]string, 0, len(status.Conditions))
	for _, c := range status.Conditions {
		all = append(all, c.Type)
	}
	if err := applyStatus(ctx, rt, rt.Namespace, shared.DefaultRuntimeKymaName, status, all); err != nil {
		return fmt.Errorf("writing the status of the runtime Kyma: %w", err)
	}
	remoteKyma.Status = status
	return nil
}

// forRuntime is status as the runtime Kyma shows it: without what names
// KCP objects, which the runtime's users cannot read and need not know.
// Each module keeps its name, state, message, version, channel, component
// name, maintenance flag and default CR (an object in the runtime); its
// Manifest goes, and its template names the runtime's catalog copy (same
// name, in the runtime's namespace) instead of the KCP's, as the public
// lifecycle manager shows them.
func forRuntime(status v1beta2.KymaStatus, runtimeNamespace string) v1beta2.KymaStatus {
	out := *status.DeepCopy()
	for i := range out.Modules {
		m := &out.Modules[i]
		m.Manifest = nil
		if m.Template != nil {
			m.Template.Namespace = runtimeNamespace
		}
	}
	return out
}

// runtimeDeletingMessage is the runtime Kyma's last operation while its
// KCP Kyma is deleted.
const runtimeDeletingMessage = "the Kyma is being deleted: its modules are removed, then this Kyma"

// markRuntimeDeleting writes state Deleting into the runtime Kyma's status
// before any module is removed, so that module operators can tell a
// deprovisioning from a module's removal. A runtime without its Kyma (or
// without the CRD) has nothing to mark.
func markRuntimeDeleting(ctx context.Context, kyma *v1beta2.Kyma, rt *remote.Runtime) error {
	remoteKyma := &v1beta2.Kyma{}
	err := rt.Get(ctx, client.ObjectKey{Namespace: rt.Namespace, Name: shared.DefaultRuntimeKymaName}, remoteKyma)
	if err != nil {
		return ignoreGoneWith(err, "reading the runtime Kyma")
	}
	status := forRuntime(kyma.Status, rt.Namespace)
	status.State = shared.StateDeleting
	status.LastOperation = keepOrNew(remoteKyma.Status.LastOperation, runtimeDeletingMessage)
	if sameStatus(remoteKyma.Status, status) {
		return nil
	}
	if err := writeRuntimeStatus(ctx, rt, remoteKyma, status); err != nil {
		return err
	}
	log.FromContext(ctx).V(1).Info("the runtime Kyma shows Deleting")
	return nil
}

package suite

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/e2e/harness"
)

func TestARuntimeAdminAddsAndRemovesAModule(t *testing.T) {
	rt := runtime(1)
	step(t, "Given a runtime without modules, its resync set to hours (--requeue-success=10h)")
	withoutModules(t, rt)
	pushedBefore := metric(t, "lifecycle_manager_push_to_reconcile_seconds_count", "")

	step(t, "When the runtime admin adds the sample module to the runtime Kyma")
	written := updateRuntimeKyma(t, rt, func(k *v1beta2.Kyma) { k.Spec.Modules = []v1beta2.Module{{Name: harness.SampleModule}} })
	var seen time.Time
	require.Eventually(t, func() bool {
		if len(kyma(t, rt).Spec.Modules) != 1 {
			return false
		}
		seen = time.Now()
		return true
	}, timeout, 20*time.Millisecond, "the edit reaches the KCP")
	t.Logf("runtime write → KCP Kyma updated by the operator: %v (push; the resync is 10h away)", seen.Sub(written).Round(time.Millisecond))
	assert.Greater(t, metric(t, "lifecycle_manager_push_to_reconcile_seconds_count", ""), pushedBefore, "a pushed event started the reconcile")

	step(t, "Then the module is installed in that runtime")
	require.Eventually(t, func() bool { _, err := deployment(t, rt, harness.SampleDeployment); return err == nil }, timeout, tick)
	eventuallyKyma(t, rt, "Ready with the module", func(k *v1beta2.Kyma) bool { return ready(k) && len(k.Status.Modules) == 1 })

	step(t, "When the admin removes it again")
	written = updateRuntimeKyma(t, rt, func(k *v1beta2.Kyma) { k.Spec.Modules = nil })

	step(t, "Then it is uninstalled")
	require.Eventually(t, func() bool {
		_, err := deployment(t, rt, harness.SampleDeployment)
		return apierrors.IsNotFound(err)
	}, timeout, tick)
	t.Logf("runtime write → module uninstalled: %v", time.Since(written).Round(time.Millisecond))
	eventuallyKyma(t, rt, "Ready without modules", func(k *v1beta2.Kyma) bool { return ready(k) && len(k.Status.Modules) == 0 })
}

func TestChannelSwitchAndNewVersionRollOut(t *testing.T) {
	rt := runtime(0)
	step(t, "Given a Kyma with the sample module 1.0.0 from channel regular")
	ensureKyma(t, rt, harness.SampleModule)
	require.False(t, sampleSettingsExist(t, rt))

	step(t, "When the runtime admin switches the Kyma to channel fast")
	updateRuntimeKyma(t, rt, func(k *v1beta2.Kyma) { k.Spec.Channel = "fast" })
	step(t, "Then the module is upgraded to 2.0.0, its new ConfigMap applied")
	eventuallyKyma(t, rt, "2.0.0 Ready", func(k *v1beta2.Kyma) bool {
		return ready(k) && len(k.Status.Modules) == 1 && k.Status.Modules[0].Version == "2.0.0"
	})
	require.True(t, sampleSettingsExist(t, rt))

	step(t, "When the admin switches back to regular")
	updateRuntimeKyma(t, rt, func(k *v1beta2.Kyma) { k.Spec.Channel = "regular" })
	step(t, "Then the downgrade is refused: the module is Warning, naming both versions, and 2.0.0 stays")
	eventuallyKyma(t, rt, "the downgrade refused", func(k *v1beta2.Kyma) bool {
		m := k.Status.Modules
		return len(m) == 1 && m[0].State == shared.StateWarning &&
			strings.Contains(m[0].Message, "2.0.0") && strings.Contains(m[0].Message, "1.0.0")
	})
	require.True(t, sampleSettingsExist(t, rt), "2.0.0 is still installed")

	step(t, "When the Kyma allows downgrades")
	updateKyma(t, rt, func(k *v1beta2.Kyma) {
		metav1.SetMetaDataAnnotation(&k.ObjectMeta, shared.AllowDowngradeAnnotation, "true")
	})
	step(t, "Then 1.0.0 is back and the ConfigMap of 2.0.0 is pruned")
	eventuallyKyma(t, rt, "1.0.0 Ready", func(k *v1beta2.Kyma) bool {
		return ready(k) && k.Status.Modules[0].Version == "1.0.0"
	})
	require.Eventually(t, func() bool { return !sampleSettingsExist(t, rt) }, timeout, tick)
	updateKyma(t, rt, func(k *v1beta2.Kyma) { delete(k.Annotations, shared.AllowDowngradeAnnotation) })

	step(t, "When the module team rolls 2.0.0 out to channel regular")
	require.NoError(t, h.Publish(t.Context(), "2.0.0", "regular"))
	step(t, "Then the Kyma in regular is upgraded")
	eventuallyKyma(t, rt, "2.0.0 through regular", func(k *v1beta2.Kyma) bool {
		return ready(k) && k.Status.Modules[0].Version == "2.0.0" && k.Status.Modules[0].Channel == "regular"
	})
	require.True(t, sampleSettingsExist(t, rt))
}

func TestADeletedModuleDeploymentComesBackByPush(t *testing.T) {
	rt := runtime(0)
	step(t, "Given the sample module installed")
	ensureKyma(t, rt, harness.SampleModule)
	dep, err := deployment(t, rt, harness.SampleDeployment)
	require.NoError(t, err)

	step(t, "When someone deletes its Deployment in the runtime")
	deleted := time.Now()
	require.NoError(t, rt.Client.Delete(t.Context(), dep))

	step(t, "Then the drift watch reports it and the operator restores it")
	restored := assert.Eventually(t, func() bool {
		d, err := deployment(t, rt, harness.SampleDeployment)
		return err == nil && d.UID != dep.UID
	}, timeout, tick)
	if !restored {
		describeModule(t, rt, harness.SampleDeployment)
		t.FailNow()
	}
	t.Logf("deleted → restored: %v", time.Since(deleted).Round(time.Millisecond))
}

// describeModule logs what a failed drift repair left behind: the
// Deployment in the runtime and the Manifest in the KCP.
func describeModule(t *testing.T, rt *harness.Runtime, name string) {
	t.Helper()
	d, err := deployment(t, rt, name)
	if err != nil {
		t.Logf("Deployment %s: %v", name, err)
	} else {
		t.Logf("Deployment %s: uid %s, generation %d, deleting since %v, finalizers %v", name, d.UID, d.Generation,
			d.DeletionTimestamp, d.Finalizers)
	}
	mf := &v1beta2.Manifest{}
	key := client.ObjectKey{Namespace: harness.Namespace, Name: rt.KymaName + "-sample"}
	if err := h.KCP.Client.Get(t.Context(), key, mf); err != nil {
		t.Logf("Manifest %s: %v", key, err)
		return
	}
	t.Logf("Manifest %s: state %s, %q, applied %q, conditions %+v", key, mf.Status.State,
		mf.Status.LastOperation.Operation, mf.Status.Applied, mf.Status.Conditions)
}

func TestTheAgentSecretDeletedIsRecreatedAndEventsFlow(t *testing.T) {
	rt := runtime(0)
	ensureKyma(t, rt, harness.SampleModule)
	step(t, "Given the agent's TLS Secret in the runtime")
	secret, err := agentSecret(t, rt)
	require.NoError(t, err)

	step(t, "When it is deleted")
	require.NoError(t, rt.Client.Delete(t.Context(), secret))

	step(t, "Then the operator writes it again")
	require.Eventually(t, func() bool {
		s, err := agentSecret(t, rt)
		return err == nil && s.UID != secret.UID
	}, timeout, tick)

	step(t, "And runtime changes still reach the KCP")
	updateRuntimeKyma(t, rt, func(k *v1beta2.Kyma) { k.Spec.Modules[0].ControllerName = "after-secret-recreated" })
	require.Eventually(t, func() bool {
		return kyma(t, rt).Spec.Modules[0].ControllerName == "after-secret-recreated"
	}, timeout, tick)
}

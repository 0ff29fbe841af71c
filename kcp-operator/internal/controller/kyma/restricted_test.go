package kyma_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
)

const restrictedAccount = "kyma-project.io/global-account-id"

func restrictTo(account string) func(*v1beta2.ModuleReleaseMeta) {
	return func(m *v1beta2.ModuleReleaseMeta) {
		m.Spec.KymaSelector = &metav1.LabelSelector{MatchLabels: map[string]string{restrictedAccount: account}}
	}
}

func inAccount(account string) func(*v1beta2.Kyma) {
	return func(k *v1beta2.Kyma) { k.Labels[restrictedAccount] = account }
}

// TestARestrictedModuleIsInstalledOnlyForTheKymasItSelects: a Kyma the
// release meta's kymaSelector selects gets the module, with the status
// fields the public operator writes; another Kyma asking for it gets an
// Error that says why, and no Manifest.
func TestARestrictedModuleIsInstalledOnlyForTheKymasItSelects(t *testing.T) {
	publish(t, module{Name: "oscar-only", Version: "1.0.0"})
	releaseMeta(t, "oscar-only", map[string]string{"regular": "1.0.0"}, restrictTo("ga-oscar"))
	listing := func(k *v1beta2.Kyma) { k.Spec.Modules = []v1beta2.Module{{Name: "oscar-only"}} }
	newKyma(t, "restricted-in", inAccount("ga-oscar"), listing)
	newKyma(t, "restricted-out", inAccount("ga-other"), listing)

	manifestAt(t, "restricted-in-oscar-only", "1.0.0")
	k := eventuallyKyma(t, "restricted-in", "the module resolved", func(k *v1beta2.Kyma) bool {
		ms := moduleStatus(k, "oscar-only")
		return ms != nil && ms.Version == "1.0.0"
	})
	assert.Equal(t, "kyma-project.io/module/oscar-only", moduleStatus(k, "oscar-only").OCMComponentName)

	k = eventuallyKyma(t, "restricted-out", "the module refused", func(k *v1beta2.Kyma) bool {
		ms := moduleStatus(k, "oscar-only")
		return ms != nil && ms.State == shared.StateError
	})
	assert.Contains(t, moduleStatus(k, "oscar-only").Message, "module oscar-only is restricted and not available for this Kyma")
	_, err := getManifest(t, "restricted-out-oscar-only")
	assert.True(t, apierrors.IsNotFound(err), "no Manifest for a Kyma the selector does not select: %v", err)
}

// TestARestrictedMandatoryModuleGoesOnlyToTheKymasItSelects: a mandatory
// module with a kymaSelector is installed on the selected Kymas only.
func TestARestrictedMandatoryModuleGoesOnlyToTheKymasItSelects(t *testing.T) {
	publish(t, module{Name: "papa-only", Version: "1.0.0"})
	releaseMeta(t, "papa-only", nil, restrictTo("ga-papa"), func(m *v1beta2.ModuleReleaseMeta) {
		m.Spec.Mandatory = &v1beta2.Mandatory{Version: "1.0.0"}
	})
	t.Cleanup(func() {
		_ = kcp.Client.Delete(context.Background(), &v1beta2.ModuleReleaseMeta{ObjectMeta: metav1.ObjectMeta{Namespace: kcpNamespace, Name: "papa-only"}})
	})
	newKyma(t, "mandatory-in", inAccount("ga-papa"))
	mf := manifestAt(t, "mandatory-in-papa-only", "1.0.0")
	assert.Equal(t, shared.EnabledValue, mf.Labels[shared.MandatoryModuleLabel])

	// The operator's cache holds the release meta now: the reconcile that
	// makes mandatory-out Ready applies its mandatory modules first.
	newKyma(t, "mandatory-out", inAccount("ga-other"))
	eventuallyKyma(t, "mandatory-out", "Ready", stateIs(shared.StateReady))
	_, err := getManifest(t, "mandatory-out-papa-only")
	assert.True(t, apierrors.IsNotFound(err), "no mandatory Manifest for a Kyma the selector does not select: %v", err)
}

package kyma_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	kymactrl "github.com/lifecycle-manager/kcp-operator/internal/controller/kyma"
)

func TestDowngradeIsRefusedUnlessAllowed(t *testing.T) {
	for _, v := range []string{"1.0.0", "2.0.0"} {
		publish(t, module{Name: "sierra-downgrade", Version: v})
	}
	releaseMeta(t, "sierra-downgrade", map[string]string{"regular": "1.0.0", "fast": "2.0.0"})
	newKyma(t, "downgrade", func(k *v1beta2.Kyma) {
		k.Spec.Channel = "fast"
		k.Spec.Modules = []v1beta2.Module{{Name: "sierra-downgrade"}}
	})
	require.Eventually(t, func() bool {
		mf, err := getManifest(t, "downgrade-sierra-downgrade")
		return err == nil && mf.Spec.Version == "2.0.0"
	}, timeout, tick, "2.0.0 is installed from fast")
	installed, err := getManifest(t, "downgrade-sierra-downgrade")
	require.NoError(t, err)

	updateKyma(t, "downgrade", func(k *v1beta2.Kyma) { k.Spec.Channel = "regular" })
	k := eventuallyKyma(t, "downgrade", "the module Warning", func(k *v1beta2.Kyma) bool {
		ms := moduleStatus(k, "sierra-downgrade")
		return ms != nil && ms.State == shared.StateWarning
	})
	ms := moduleStatus(k, "sierra-downgrade")
	assert.Contains(t, ms.Message, "2.0.0", "the installed version is named")
	assert.Contains(t, ms.Message, "1.0.0", "the offered version is named")
	assert.Equal(t, "2.0.0", ms.Version, "the status shows what runs")
	assert.Equal(t, shared.StateWarning, k.Status.State)
	require.Eventually(t, func() bool { return hasEvent(t, "downgrade", kymactrl.ReasonDowngradeRefused) }, timeout, tick)
	mf, err := getManifest(t, "downgrade-sierra-downgrade")
	require.NoError(t, err)
	assert.Equal(t, "2.0.0", mf.Spec.Version, "the installed version stays")
	assert.Equal(t, installed.Generation, mf.Generation, "the Manifest's spec is not changed")

	updateKyma(t, "downgrade", func(k *v1beta2.Kyma) {
		if k.Annotations == nil {
			k.Annotations = map[string]string{}
		}
		k.Annotations[kymactrl.AllowDowngradeAnnotation] = shared.EnabledValue
	})
	require.Eventually(t, func() bool {
		mf, err := getManifest(t, "downgrade-sierra-downgrade")
		return err == nil && mf.Spec.Version == "1.0.0"
	}, timeout, tick, "with the opt-in 1.0.0 is installed")
	eventuallyKyma(t, "downgrade", "the module no longer refused", func(k *v1beta2.Kyma) bool {
		ms := moduleStatus(k, "sierra-downgrade")
		return ms != nil && ms.Version == "1.0.0" && !strings.Contains(ms.Message, "refused")
	})
}

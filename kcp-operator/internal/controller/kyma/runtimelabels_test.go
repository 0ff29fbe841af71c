package kyma_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
)

// The BTP account labels of the KCP Kyma reach the runtime Kyma, and
// follow when they change.
func TestAccountLabelsReachTheRuntimeKyma(t *testing.T) {
	newKyma(t, "accounts", func(k *v1beta2.Kyma) {
		k.Labels[shared.GlobalAccountIDLabel] = "ga-1"
		k.Labels[shared.SubAccountIDLabel] = "sa-1"
	})
	labelsAre := func(ga, sa string) func() bool {
		return func() bool {
			rk, err := runtimeKyma(t, "accounts")
			return err == nil && rk.Labels[shared.GlobalAccountIDLabel] == ga && rk.Labels[shared.SubAccountIDLabel] == sa
		}
	}
	require.Eventually(t, labelsAre("ga-1", "sa-1"), timeout, tick, "the labels are copied")

	updateKyma(t, "accounts", func(k *v1beta2.Kyma) {
		k.Labels[shared.GlobalAccountIDLabel] = "ga-2"
		k.Labels[shared.SubAccountIDLabel] = "sa-2"
	})
	require.Eventually(t, labelsAre("ga-2", "sa-2"), timeout, tick, "the labels follow")
}

package kyma

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/componentsource"
	"github.com/lifecycle-manager/kcp-operator/internal/resolve"
	"github.com/lifecycle-manager/kcp-operator/internal/signature"
)

// TestDescriptorConditionNamesTheMissingRegistry covers the case the Kyma
// suite cannot show, its operator having a registry: an operator without
// one reports why a template without a descriptor does not resolve.
func TestDescriptorConditionNamesTheMissingRegistry(t *testing.T) {
	kyma := &v1beta2.Kyma{ObjectMeta: metav1.ObjectMeta{Name: "k", Generation: 3}}
	status := &v1beta2.KymaStatus{}
	notConfigured := &resolve.Error{Module: "keda", Reason: "no registry is configured", Code: componentsource.ReasonRegistryNotConfigured}
	descriptorCondition(kyma, status, []moduleResult{{err: notConfigured}, {err: fmt.Errorf("wrapped: %w", &resolve.Error{Module: "other", Reason: "x"})}})
	c := meta.FindStatusCondition(status.Conditions, ConditionModuleDescriptors)
	require.NotNil(t, c)
	assert.Equal(t, metav1.ConditionFalse, c.Status)
	assert.Equal(t, componentsource.ReasonRegistryNotConfigured, c.Reason)
	assert.Equal(t, `descriptors not read from the registry: module "keda": no registry is configured (DescriptorRegistryNotConfigured)`, c.Message,
		"errors without a descriptor code are not about the registry")

	descriptorCondition(kyma, status, []moduleResult{{resolved: &resolve.Module{}}})
	assert.Nil(t, meta.FindStatusCondition(status.Conditions, ConditionModuleDescriptors), "no module needs the registry: no condition")

	descriptorCondition(kyma, status, []moduleResult{{resolved: &resolve.Module{Document: &signature.Document{}}}})
	assert.True(t, meta.IsStatusConditionTrue(status.Conditions, ConditionModuleDescriptors))
}

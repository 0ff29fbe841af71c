package suite

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/e2e/harness"
)

func TestSkipReconciliationIsHonoured(t *testing.T) {
	rt := runtime(1)
	withoutModules(t, rt)
	step(t, "Given the Kyma labelled %s=true", shared.SkipReconciliationLabel)
	updateKyma(t, rt, func(k *v1beta2.Kyma) { k.Labels[shared.SkipReconciliationLabel] = "true" })

	step(t, "When the runtime admin adds a module")
	updateRuntimeKyma(t, rt, func(k *v1beta2.Kyma) { k.Spec.Modules = []v1beta2.Module{{Name: harness.SampleModule}} })

	step(t, "Then nothing happens (checked for 5 seconds)")
	assert.Never(t, func() bool { return len(kyma(t, rt).Spec.Modules) > 0 }, 5*time.Second, 200*time.Millisecond)

	step(t, "When the label goes, the change is reconciled")
	updateKyma(t, rt, func(k *v1beta2.Kyma) { delete(k.Labels, shared.SkipReconciliationLabel) })
	eventuallyKyma(t, rt, "the module installed", func(k *v1beta2.Kyma) bool { return ready(k) && len(k.Status.Modules) == 1 })
	updateRuntimeKyma(t, rt, func(k *v1beta2.Kyma) { k.Spec.Modules = nil })
	eventuallyKyma(t, rt, "without modules", func(k *v1beta2.Kyma) bool { return ready(k) && len(k.Status.Modules) == 0 })
}

func runtimeTemplates(t *testing.T, rt *harness.Runtime) map[string]bool {
	t.Helper()
	var list v1beta2.ModuleTemplateList
	require.NoError(t, rt.Client.List(t.Context(), &list, client.InNamespace("kyma-system")))
	out := map[string]bool{}
	for _, tmpl := range list.Items {
		out[tmpl.Name] = true
	}
	return out
}

func TestTheCatalogIsGatedByBetaAndInternal(t *testing.T) {
	rt := runtime(1)
	ensureKyma(t, rt)
	step(t, "Given the runtime's catalog has the sample module's templates")
	require.Eventually(t, func() bool { return runtimeTemplates(t, rt)["sample-1.0.0"] }, timeout, tick)

	step(t, "When a beta module and an internal module are published to the KCP")
	for _, m := range []struct{ name, label string }{{"beta-sample", shared.BetaLabel}, {"internal-sample", shared.InternalLabel}} {
		tmpl := &v1beta2.ModuleTemplate{}
		require.NoError(t, h.KCP.Client.Get(t.Context(), client.ObjectKey{Namespace: harness.Namespace, Name: "sample-1.0.0"}, tmpl))
		gated := &v1beta2.ModuleTemplate{Spec: *tmpl.Spec.DeepCopy()}
		gated.Name, gated.Namespace = m.name+"-1.0.0", harness.Namespace
		gated.Labels = map[string]string{m.label: "true"}
		gated.Spec.ModuleName = m.name
		require.NoError(t, h.KCP.Client.Create(t.Context(), gated))
	}
	step(t, "Then a Kyma without the beta and internal labels does not see them")
	assert.Never(t, func() bool {
		c := runtimeTemplates(t, rt)
		return c["beta-sample-1.0.0"] || c["internal-sample-1.0.0"]
	}, 3*time.Second, 200*time.Millisecond)

	step(t, "When the Kyma is labelled beta, the beta module appears in its catalog, the internal one does not")
	updateKyma(t, rt, func(k *v1beta2.Kyma) { k.Labels[shared.BetaLabel] = "true" })
	require.Eventually(t, func() bool { return runtimeTemplates(t, rt)["beta-sample-1.0.0"] }, timeout, tick)
	assert.False(t, runtimeTemplates(t, rt)["internal-sample-1.0.0"])
}

func TestDeletionRemovesEverythingFromTheRuntime(t *testing.T) {
	rt := runtime(1)
	ensureKyma(t, rt)
	updateRuntimeKyma(t, rt, func(k *v1beta2.Kyma) { k.Spec.Modules = []v1beta2.Module{{Name: harness.SampleModule}} })
	eventuallyKyma(t, rt, "the module installed", func(k *v1beta2.Kyma) bool { return ready(k) && len(k.Status.Modules) == 1 })

	step(t, "When the Kyma of a runtime with a module is deleted")
	require.NoError(t, h.KCP.Client.Delete(t.Context(), kyma(t, rt)))

	step(t, "Then the module, the agent, its certificates and the catalog leave the runtime, and the Kyma goes")
	require.Eventually(t, func() bool {
		err := h.KCP.Client.Get(t.Context(), client.ObjectKey{Namespace: harness.Namespace, Name: rt.KymaName}, &v1beta2.Kyma{})
		return apierrors.IsNotFound(err)
	}, timeout, tick)
	_, err := deployment(t, rt, harness.SampleDeployment)
	assert.True(t, apierrors.IsNotFound(err), "the module's Deployment is gone")
	_, err = deployment(t, rt, "skr-agent")
	assert.True(t, apierrors.IsNotFound(err), "the agent is gone")
	_, err = agentSecret(t, rt)
	assert.True(t, apierrors.IsNotFound(err), "the agent's certificate is gone from the runtime")
	err = rt.Client.Get(t.Context(), client.ObjectKey{Name: "skr-agent"}, &admissionregistrationv1.ValidatingWebhookConfiguration{})
	assert.True(t, apierrors.IsNotFound(err), "the webhooks are gone")
	err = h.KCP.Client.Get(t.Context(), client.ObjectKey{Namespace: harness.Namespace, Name: rt.KymaName + "-webhook-tls"}, &corev1.Secret{})
	assert.True(t, apierrors.IsNotFound(err), "the certificate in the KCP is gone")
	var templates v1beta2.ModuleTemplateList
	err = rt.Client.List(t.Context(), &templates, client.InNamespace("kyma-system"))
	assert.True(t, err != nil || len(templates.Items) == 0, "the catalog is gone")
}

func TestABlockedDeletionIsWarnedAndPurged(t *testing.T) {
	rt := runtime(0)
	ensureKyma(t, rt, harness.SampleModule)
	step(t, "Given a user-created CR of the module's kind in the runtime")
	mine := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "sample.kyma-project.io/v1alpha1", "kind": "Sample",
		"metadata": map[string]any{"name": "created-by-a-user", "namespace": "default"},
		"spec":     map[string]any{"greeting": "mine"},
	}}
	require.NoError(t, rt.Client.Create(t.Context(), mine))
	// The user's CR would block every later removal of the module in
	// this runtime, which the scenarios after this one share.
	t.Cleanup(func() { _ = client.IgnoreNotFound(rt.Client.Delete(context.WithoutCancel(t.Context()), mine)) })

	step(t, "When the Kyma is deleted")
	purgesBefore := metric(t, "lifecycle_manager_kyma_purges_total", `result="purged"`)
	deleted := time.Now()
	require.NoError(t, h.KCP.Client.Delete(t.Context(), kyma(t, rt)))

	step(t, "Then its module is Warning, blocked by the user's CR, which the message names")
	require.Eventually(t, func() bool {
		mf := &v1beta2.Manifest{}
		err := h.KCP.Client.Get(t.Context(), client.ObjectKey{Namespace: harness.Namespace, Name: rt.KymaName + "-sample"}, mf)
		return err == nil && mf.Status.State == shared.StateWarning
	}, timeout, tick)
	mf := &v1beta2.Manifest{}
	require.NoError(t, h.KCP.Client.Get(t.Context(), client.ObjectKey{Namespace: harness.Namespace, Name: rt.KymaName + "-sample"}, mf))
	assert.Contains(t, mf.Status.LastOperation.Operation, "Sample default/created-by-a-user")

	step(t, "And after the purge grace period (20s here) the Kyma is purged")
	require.Eventually(t, func() bool {
		err := h.KCP.Client.Get(t.Context(), client.ObjectKey{Namespace: harness.Namespace, Name: rt.KymaName}, &v1beta2.Kyma{})
		return apierrors.IsNotFound(err)
	}, timeout+30*time.Second, tick)
	t.Logf("deleted → purged: %v", time.Since(deleted).Round(time.Second))
	// The operator counts the purge once the API server has answered its
	// finalizer removal, which this test may see first.
	assert.Eventually(t, func() bool {
		return metric(t, "lifecycle_manager_kyma_purges_total", `result="purged"`) > purgesBefore
	}, 10*time.Second, tick, "the purge is counted")
	_, err := deployment(t, rt, harness.SampleDeployment)
	assert.True(t, apierrors.IsNotFound(err), "the purge removed the module's resources")
}

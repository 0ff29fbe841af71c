package kyma_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/testing/testmodule"
)

// TestAnUpgradeIsRecordedBeforeItsApply: an apply after the first, which
// adds objects, writes them into status.synced before it places them: the
// earlier render's objects stay known and the new ones are known before
// they exist. The upgrade's apply fails on a new object; its status keeps
// the record, and the module's removal deletes what both versions placed.
func TestAnUpgradeIsRecordedBeforeItsApply(t *testing.T) {
	const name = "recordedupgrade"
	h := newHeldInstallOf(t, name, func(ctx context.Context) error {
		return recordedModule(name, false).Publish(ctx, kcp.Client, reg.Host, kcpNamespace)
	})
	ns := h.runtimeNamespace
	h.reconcile(t)
	require.NoError(t, testmodule.MarkAvailable(t.Context(), runtimeEnv.Client, ns, name+"-operator"))
	h.reconcile(t)
	require.Equal(t, shared.StateReady, h.stored(t).Status.State, "version 1.0.0 is installed")

	upgrade := recordedModule(name, true)
	upgrade.Version = "2.0.0"
	require.NoError(t, upgrade.Publish(t.Context(), kcp.Client, reg.Host, kcpNamespace))
	require.Eventually(t, func() bool {
		mrm := &v1beta2.ModuleReleaseMeta{}
		if kcp.Client.Get(t.Context(), client.ObjectKey{Namespace: kcpNamespace, Name: name}, mrm) != nil {
			return false
		}
		mrm.Spec.Channels = []v1beta2.ChannelVersionAssignment{{Channel: "regular", Version: "2.0.0"}}
		return kcp.Client.Update(t.Context(), mrm) == nil
	}, timeout, tick, "the channel moves to 2.0.0")
	model := manifestAt(t, name+"-"+name, "2.0.0")
	require.Eventually(t, func() bool {
		mf := h.stored(t)
		mf.Spec = model.Spec
		return kcp.Client.Update(t.Context(), mf) == nil
	}, timeout, tick, "the held Manifest moves to 2.0.0")

	h.kcpWrites.Store(0)
	h.reconcile(t)
	mf := h.stored(t)
	require.Equal(t, shared.StateError, mf.Status.State, "the broken ConfigMap fails the upgrade's apply")
	assert.Equal(t, int64(2), h.kcpWrites.Load(), "KCP writes of the upgrade: the record before the apply and the failure")
	assert.Contains(t, recordedKeys(mf), "ConfigMap "+ns+"/broken", "the record written before the apply lists the new object")
	assert.Subset(t, recordedKeys(mf), []string{"Deployment " + ns + "/" + name + "-operator", "Namespace /" + ns + "-own"},
		"the earlier objects stay recorded")

	h.deleteAndFinish(t)
	assert.True(t, goneOrGoing(t, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-operator"}}))
	assert.True(t, goneOrGoing(t, crd("records."+ns+".test.io")), "the module's CRD is deleted")
	assert.True(t, goneOrGoing(t, namespace(ns+"-own")), "the Namespace the module created is deleted")
}

// TestADeletionSweepsTheManifestsObjectsAcrossTheRuntime: a first install
// that stopped before any status was written and whose render then lost
// objects (a CRD, a Deployment in another namespace) has them deleted
// still: they carry the Manifest's label, and deletion lists the kinds it
// knows in the whole runtime by it. The same module's objects of another
// Manifest — another Kyma sharing the API server — stay, as does an
// object with this Manifest's label but without the module's labels.
func TestADeletionSweepsTheManifestsObjectsAcrossTheRuntime(t *testing.T) {
	const name = "sweptwide"
	h := newHeldInstallOf(t, name, func(ctx context.Context) error {
		return recordedModule(name, false).Publish(ctx, kcp.Client, reg.Host, kcpNamespace)
	})
	ns := h.runtimeNamespace
	h.reconcile(t)
	require.NoError(t, h.deployment(t.Context()), "the module is applied")
	uid := h.stored(t).UID
	elsewhere := namespace(ns + "-elsewhere")
	require.NoError(t, runtimeEnv.Client.Create(t.Context(), elsewhere))

	ours := moduleLabels(name, uid)
	earlierCRD := labelledCRD(t, ns+"-earlier", ours)
	othersCRD := labelledCRD(t, ns+"-others", moduleLabels(name, "another-manifest"))
	unlabelledCRD := labelledCRD(t, ns+"-unlabelled", map[string]string{shared.ManifestLabel: string(uid)})
	earlier := deploymentWith(t, elsewhere.Name, "of-an-earlier-version", ours)
	others := deploymentWith(t, elsewhere.Name, "of-another-kyma", moduleLabels(name, "another-manifest"))

	h.restart()
	require.Empty(t, h.stored(t).Status.Synced, "no status was written: the first install's status was held")
	h.deleteAndFinish(t)
	assert.True(t, goneOrGoing(t, earlierCRD), "a cluster-scoped object with the Manifest's label is swept")
	assert.True(t, goneOrGoing(t, earlier), "a namespaced one outside the Kyma's namespaces is swept")
	assert.True(t, goneOrGoing(t, crd("records."+ns+".test.io")), "the rendered CRD is deleted")
	assert.True(t, goneOrGoing(t, namespace(ns+"-own")), "the Namespace the module created is deleted")
	assert.True(t, present(t, othersCRD), "another Manifest's object of the same module stays")
	assert.True(t, present(t, others), "another Manifest's namespaced object stays")
	assert.True(t, present(t, unlabelledCRD), "an object without the module's labels stays")
}

func moduleLabels(module string, manifest types.UID) map[string]string {
	return map[string]string{shared.ManagedByLabel: shared.OperatorName, shared.ModuleNameLabel: module, shared.ManifestLabel: string(manifest)}
}

// labelledCRD creates the CRD of group <group>.test.io with labels.
func labelledCRD(t *testing.T, group string, labels map[string]string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	c := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "things." + group + ".test.io", Labels: labels},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group + ".test.io", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "Thing", Plural: "things", ListKind: "ThingList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptrTo(true)}}}},
		},
	}
	require.NoError(t, runtimeEnv.Client.Create(t.Context(), c))
	return c
}

// deploymentWith creates a Deployment with labels.
func deploymentWith(t *testing.T, ns, name string, labels map[string]string) *appsv1.Deployment {
	t.Helper()
	selector := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: selector},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: selector},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.example.com/c"}}}}},
	}
	require.NoError(t, runtimeEnv.Client.Create(t.Context(), d))
	return d
}

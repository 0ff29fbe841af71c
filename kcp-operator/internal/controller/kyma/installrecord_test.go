package kyma_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/testing/testmodule"
)

// The tests of the install record: what an apply places is recorded
// before the apply, and a deletion finds what no record lists.

// recordedModule is a Helm module whose objects are named after the
// namespace it is installed into, so that the model install the suite's
// operator makes beside a test's own does not share them: a CRD, a
// Namespace <ns>-own the module creates, a Namespace <ns>-users a user
// made before, the Deployment <name>-operator and, when broken, a
// ConfigMap the API server refuses.
func recordedModule(name string, broken bool) testmodule.HelmModule {
	templates := map[string]string{
		"crd.yaml": `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: {{ printf "records.%s.test.io" .Release.Namespace }}}
spec:
  group: {{ printf "%s.test.io" .Release.Namespace }}
  scope: Namespaced
  names: {kind: Record, plural: records, listKind: RecordList}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`,
		"namespaces.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: {{ .Release.Namespace }}-own}\n---\n" +
			"apiVersion: v1\nkind: Namespace\nmetadata: {name: {{ .Release.Namespace }}-users}\n",
	}
	if broken {
		templates["broken.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: broken}\ndata: {\"not a key!\": refused}\n"
	}
	return testmodule.HelmModule{Name: name, Version: "1.0.0", Config: map[string]any{"replicas": 1}, Templates: templates}
}

// usersNamespace creates the Namespace <ns>-users with a user's ConfigMap.
func usersNamespace(t *testing.T, ns string) (*corev1.Namespace, *corev1.ConfigMap) {
	t.Helper()
	users := namespace(ns + "-users")
	require.NoError(t, runtimeEnv.Client.Create(t.Context(), users))
	notes := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: users.Name, Name: "notes"}, Data: map[string]string{"owner": "user"}}
	require.NoError(t, runtimeEnv.Client.Create(t.Context(), notes, client.FieldOwner("kubectl")))
	return users, notes
}

func (h *heldInstall) deleteAndFinish(t *testing.T) {
	t.Helper()
	require.NoError(t, kcp.Client.Delete(t.Context(), h.stored(t)))
	require.Eventually(t, func() bool {
		_, _ = h.reconciler.Reconcile(t.Context(), ctrl.Request{NamespacedName: h.key})
		return apierrors.IsNotFound(kcp.Client.Get(t.Context(), h.key, &v1beta2.Manifest{}))
	}, timeout, tick, "the Manifest's deletion finishes")
}

func recordedKeys(mf *v1beta2.Manifest) []string {
	var out []string
	for _, res := range mf.Status.Synced {
		out = append(out, res.Kind+" "+res.Namespace+"/"+res.Name)
	}
	return out
}

// TestAFailedFirstApplyIsRecordedAndRemoved: a first apply writes no
// record before it: what it places carries the Manifest's label. When it
// fails on one object, its one status records every object it was to
// place; the module's removal then deletes them all — its Deployment, its
// CRD and the Namespace it created — and keeps the Namespace a user made
// and the user's object in it.
func TestAFailedFirstApplyIsRecordedAndRemoved(t *testing.T) {
	const name = "failedfirst"
	h := newHeldInstallOf(t, name, func(ctx context.Context) error {
		return recordedModule(name, true).Publish(ctx, kcp.Client, reg.Host, kcpNamespace)
	})
	ns := h.runtimeNamespace
	users, notes := usersNamespace(t, ns)

	h.reconcile(t)
	mf := h.stored(t)
	require.Equal(t, shared.StateError, mf.Status.State, "the broken ConfigMap fails the apply")
	assert.Equal(t, int64(2), h.kcpWrites.Load(), "KCP writes of the first apply: the finalizer and the failure, no record before it")
	assert.Subset(t, recordedKeys(mf), []string{
		"CustomResourceDefinition /records." + ns + ".test.io", "Namespace /" + ns + "-own",
		"Deployment " + ns + "/" + name + "-operator", "ConfigMap " + ns + "/broken",
	}, "the failed apply's status lists what it was to place")
	require.NoError(t, h.deployment(t.Context()), "the rest of the module was applied")
	assert.True(t, ownedBy(t, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-operator"}}, mf.UID),
		"the applied Deployment carries the Manifest's label")
	assert.True(t, ownedBy(t, crd("records."+ns+".test.io"), mf.UID), "the applied CRD carries the Manifest's label")
	assert.True(t, ownedBy(t, namespace(ns+"-own"), mf.UID), "the created Namespace carries the Manifest's label")
	assert.False(t, ownedBy(t, namespace(ns+"-users"), mf.UID), "the user's Namespace does not")

	h.deleteAndFinish(t)
	assert.True(t, apierrors.IsNotFound(h.deployment(t.Context())), "the module's Deployment is deleted")
	assert.True(t, goneOrGoing(t, crd("records."+ns+".test.io")), "the module's CRD is deleted")
	assert.True(t, goneOrGoing(t, namespace(ns+"-own")), "the Namespace the module created is deleted")
	assert.True(t, present(t, users), "the user's Namespace stays")
	assert.True(t, present(t, notes), "the user's object stays")
}

// TestAModuleWhoseApplyFailsLeavesNothingWhenRemoved: through the whole
// operator, a module whose first apply keeps failing on one object is
// removed from its Kyma, and nothing it applied stays in the runtime.
func TestAModuleWhoseApplyFailsLeavesNothingWhenRemoved(t *testing.T) {
	const name = "failsapply"
	require.NoError(t, recordedModule(name, true).Publish(t.Context(), kcp.Client, reg.Host, kcpNamespace))
	releaseMeta(t, name, map[string]string{"regular": "1.0.0"})
	users, notes := usersNamespace(t, name)
	newKyma(t, name, func(k *v1beta2.Kyma) { k.Spec.Modules = []v1beta2.Module{{Name: name}} })
	eventuallyManifest(t, name+"-"+name, "its apply failed", manifestState(shared.StateError))
	deployment := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: name + "-operator"}}
	require.True(t, present(t, deployment), "the rest of the module was applied")

	updateKyma(t, name, func(k *v1beta2.Kyma) { k.Spec.Modules = nil })
	require.Eventually(t, func() bool {
		_, err := getManifest(t, name+"-"+name)
		return apierrors.IsNotFound(err)
	}, timeout, tick, "the module is removed")
	assert.True(t, goneOrGoing(t, deployment), "the module's Deployment is deleted")
	assert.True(t, goneOrGoing(t, crd("records."+name+".test.io")), "the module's CRD is deleted")
	assert.True(t, goneOrGoing(t, namespace(name+"-own")), "the Namespace the module created is deleted")
	assert.True(t, present(t, users), "the user's Namespace stays")
	assert.True(t, present(t, notes), "the user's object stays")
}

// TestADeletionWithoutStatusRemovesTheModulesObjects: a Manifest whose
// status is lost — an operator that stopped after the apply, before any
// status reached the API server — still has its objects deleted: those it
// renders, a labelled one of an earlier render that it no longer renders,
// and the Namespace its create marked as its own. Objects without the
// module's labels, or with another module's, stay.
func TestADeletionWithoutStatusRemovesTheModulesObjects(t *testing.T) {
	const name = "statuslost"
	h := newHeldInstallOf(t, name, func(ctx context.Context) error {
		return recordedModule(name, false).Publish(ctx, kcp.Client, reg.Host, kcpNamespace)
	})
	ns := h.runtimeNamespace
	users, notes := usersNamespace(t, ns)
	h.reconcile(t)
	require.NoError(t, h.deployment(t.Context()), "the module is applied")
	earlier := labelledDeployment(t, ns, "of-an-earlier-version", name)
	other := labelledDeployment(t, ns, "of-another-module", "another")

	mf := h.stored(t)
	mf.Status = v1beta2.ManifestStatus{}
	require.NoError(t, kcp.Client.Status().Update(t.Context(), mf), "the status is lost")
	h.restart()

	h.deleteAndFinish(t)
	assert.True(t, apierrors.IsNotFound(h.deployment(t.Context())), "the rendered Deployment is deleted")
	assert.True(t, goneOrGoing(t, crd("records."+ns+".test.io")), "the rendered CRD is deleted")
	assert.True(t, goneOrGoing(t, namespace(ns+"-own")), "the Namespace the module created is deleted")
	assert.True(t, goneOrGoing(t, earlier), "a labelled object of an earlier render is swept")
	assert.True(t, present(t, other), "another module's object stays")
	assert.True(t, present(t, users), "the user's Namespace stays")
	assert.True(t, present(t, notes), "the user's object stays")
}

// labelledDeployment creates a Deployment that carries the labels the
// render gives the objects of module.
func labelledDeployment(t *testing.T, ns, name, module string) *appsv1.Deployment {
	t.Helper()
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
			Labels: map[string]string{shared.ManagedByLabel: shared.OperatorName, shared.ModuleNameLabel: module}},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.example.com/c"}}}}},
	}
	require.NoError(t, runtimeEnv.Client.Create(t.Context(), d))
	return d
}

// ownedBy reports whether the runtime's obj carries uid's ManifestLabel.
func ownedBy(t *testing.T, obj client.Object, uid types.UID) bool {
	t.Helper()
	require.NoError(t, runtimeEnv.Client.Get(t.Context(), client.ObjectKeyFromObject(obj), obj))
	return obj.GetLabels()[shared.ManifestLabel] == string(uid)
}

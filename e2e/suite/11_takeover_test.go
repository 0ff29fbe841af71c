package suite

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/e2e/harness"
)

// The public lifecycle manager's names, as it leaves them in a KCP and a
// runtime.
const (
	publicManagedBy = "kyma"
	publicApplier   = "declarative.kyma-project.io/applier"
	publicCRManager = "resource.kyma-project.io/finalizer"
	publicOperator  = "operator.kyma-project.io/lifecycle-manager"
	publicOwnedBy   = "operator.kyma-project.io/owned-by"
)

func TestAFleetOfThePublicLifecycleManagerIsTakenOver(t *testing.T) {
	if !h.Local {
		t.Skip("the operator is stopped and the runtime prepared while it is down (local mode)")
	}
	rt := runtime(0)
	step(t, "Given a runtime whose module this operator installed once, to know the Manifest it writes")
	ensureKyma(t, rt, harness.SampleModule)
	ours := manifestOf(t, rt)
	// Earlier scenarios may have moved the Kyma to another channel: the
	// public Kyma asks for what this one had, so that no downgrade is due.
	old := kyma(t, rt)
	spec := v1beta2.KymaSpec{Channel: old.Spec.Channel}
	for _, m := range old.Spec.Modules {
		if m.Name == harness.SampleModule {
			spec.Modules = append(spec.Modules, m)
		}
	}
	removeKyma(t, rt)

	step(t, "And the KCP and the runtime as the public lifecycle manager leaves them, the operator stopped meanwhile")
	require.NoError(t, h.StopOperator(t.Context()))
	operatorUp := false
	t.Cleanup(func() {
		if !operatorUp {
			_ = h.StartOperator(t.Context())
		}
	})
	prepared := preparePublicRuntime(t, rt, ours, spec)
	kymaUID, manifestUID := preparePublicKCP(t, rt, ours, spec)

	step(t, "When this operator starts")
	seen := watchStates(t, rt)
	require.NoError(t, h.StartOperator(t.Context()))
	operatorUp = true

	step(t, "Then the Kyma is Ready with its module, without passing through Warning")
	eventuallyKyma(t, rt, "Ready with the agent and its module", func(k *v1beta2.Kyma) bool {
		return ready(k) && pushReady(k) && len(k.Status.Modules) == 1 && k.Status.Modules[0].State == shared.StateReady
	})
	states := seen.stop()
	t.Logf("states seen: %v", states)
	assert.NotContains(t, states, "Kyma "+string(shared.StateWarning))
	assert.NotContains(t, states, "Manifest "+string(shared.StateWarning))
	assert.Empty(t, eventsOn(t, "Warning", kymaUID, manifestUID), "no Warning Event on the Kyma or its Manifest")

	step(t, "And the module's objects are adopted in place, the Manifest holds only this operator's finalizer")
	mf := manifestOf(t, rt)
	assert.Equal(t, []string{shared.ManifestFinalizer}, mf.Finalizers)
	dep, err := deployment(t, rt, harness.SampleDeployment)
	require.NoError(t, err)
	assert.Equal(t, prepared.deploymentUID, dep.UID, "the module's Deployment was adopted, not recreated")
	assert.Equal(t, harness.SampleModule, dep.Labels[shared.ModuleNameLabel])

	step(t, "And nothing of the user's is deleted")
	for _, o := range prepared.users {
		assert.NoError(t, rt.Client.Get(t.Context(), client.ObjectKeyFromObject(o), o.DeepCopy()), "%s %s", o.GetKind(), o.GetName())
	}

	step(t, "And the public agent is gone, this operator's is the only one")
	for _, o := range prepared.publicAgent {
		err := rt.Client.Get(t.Context(), client.ObjectKeyFromObject(o), o.DeepCopy())
		assert.True(t, apierrors.IsNotFound(err), "the public agent's %s %s is gone: %v", o.GetKind(), o.GetName(), err)
	}
	assert.Equal(t, []string{"skr-agent"}, webhookConfigurations(t, rt))
	assert.Eventually(t, func() bool {
		return slices.ContainsFunc(eventsOn(t, "Normal", kymaUID), func(e string) bool {
			return strings.HasPrefix(e, "PublicAgentRemoved: ") && strings.Contains(e, "ValidatingWebhookConfiguration skr-webhook")
		})
	}, timeout, tick, "an Event on the Kyma names what was removed")

	step(t, "And the catalog's copies are this operator's")
	catalogCopy := &v1beta2.ModuleTemplate{}
	require.NoError(t, rt.Client.Get(t.Context(), client.ObjectKey{Namespace: shared.DefaultRuntimeNamespace, Name: harness.SampleModule + "-1.0.0"}, catalogCopy))
	assert.Equal(t, shared.OperatorName, catalogCopy.Labels[shared.ManagedByLabel])

	step(t, "And a change in the runtime reaches the KCP by push")
	require.NoError(t, rt.Client.Delete(t.Context(), dep))
	assert.Eventually(t, func() bool {
		d, err := deployment(t, rt, harness.SampleDeployment)
		return err == nil && d.UID != dep.UID
	}, timeout, tick, "the deleted Deployment is restored")
}

func manifestOf(t *testing.T, rt *harness.Runtime) *v1beta2.Manifest {
	t.Helper()
	mf := &v1beta2.Manifest{}
	require.NoError(t, h.KCP.Client.Get(t.Context(), client.ObjectKey{Namespace: harness.Namespace, Name: rt.KymaName + "-" + harness.SampleModule}, mf))
	return mf
}

// removeKyma deletes the runtime's Kyma and waits until it and the
// module's objects are gone.
func removeKyma(t *testing.T, rt *harness.Runtime) {
	t.Helper()
	require.NoError(t, h.KCP.Client.Delete(t.Context(), kyma(t, rt)))
	require.Eventually(t, func() bool {
		err := h.KCP.Client.Get(t.Context(), client.ObjectKey{Namespace: harness.Namespace, Name: rt.KymaName}, &v1beta2.Kyma{})
		_, gone := deployment(t, rt, harness.SampleDeployment)
		return apierrors.IsNotFound(err) && apierrors.IsNotFound(gone)
	}, timeout, tick, "the Kyma and its module are gone")
}

// preparePublicKCP writes the runtime's Kyma and Manifest as the public
// lifecycle manager leaves them: its labels, finalizers and status, the
// Manifest spec as the module's template gives it. It returns their UIDs.
func preparePublicKCP(t *testing.T, rt *harness.Runtime, ours *v1beta2.Manifest, spec v1beta2.KymaSpec) (kymaUID, manifestUID types.UID) {
	t.Helper()
	ctx := t.Context()
	k := &v1beta2.Kyma{
		ObjectMeta: metav1.ObjectMeta{Name: rt.KymaName, Namespace: harness.Namespace,
			Labels: map[string]string{
				shared.RuntimeIDLabel: rt.RuntimeID, shared.ManagedByLabel: shared.OperatorName,
				shared.GlobalAccountIDLabel: "global-account-1", "kyma-project.io/subaccount-id": "subaccount-1",
			},
			// The agent's webhook address in local mode, as CreateKyma gives it.
			Annotations: map[string]string{shared.AgentWebhookURLAnnotation: "https://127.0.0.1:" + strconv.Itoa(rt.AgentPort)},
			Finalizers:  []string{shared.KymaFinalizer},
		},
		Spec: *spec.DeepCopy(),
	}
	require.NoError(t, h.KCP.Client.Create(ctx, k))
	k.Status = v1beta2.KymaStatus{State: shared.StateReady, Modules: []v1beta2.ModuleStatus{{
		Name: harness.SampleModule, Channel: spec.Channel, Version: ours.Spec.Version, State: shared.StateReady,
	}}}
	require.NoError(t, h.KCP.Client.Status().Update(ctx, k))

	mf := &v1beta2.Manifest{
		ObjectMeta: metav1.ObjectMeta{Name: ours.Name, Namespace: harness.Namespace,
			Labels: map[string]string{
				shared.KymaNameLabel: rt.KymaName, shared.ModuleNameLabel: harness.SampleModule,
				"operator.kyma-project.io/channel": spec.Channel, shared.ManagedByLabel: shared.OperatorName,
			},
			Finalizers: shared.PublicManifestFinalizers(),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: v1beta2.GroupVersion.String(), Kind: v1beta2.KymaKind,
				Name: k.Name, UID: k.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
		},
		Spec: *ours.Spec.DeepCopy(),
	}
	require.NoError(t, h.KCP.Client.Create(ctx, mf, client.FieldOwner(publicOperator)))
	mf.Status = v1beta2.ManifestStatus{State: shared.StateReady, Synced: ours.Status.Synced}
	require.NoError(t, h.KCP.Client.Status().Update(ctx, mf, client.FieldOwner(publicOperator)))
	return k.UID, mf.UID
}

// preparedRuntime is what preparePublicRuntime left in the runtime.
type preparedRuntime struct {
	deploymentUID types.UID
	users         []*unstructured.Unstructured
	publicAgent   []*unstructured.Unstructured
}

// preparePublicRuntime writes the runtime as the public lifecycle manager
// leaves it — the module's objects under its applier with its labels, the
// default CR, the runtime Kyma, its agent — and objects of the user's.
func preparePublicRuntime(t *testing.T, rt *harness.Runtime, ours *v1beta2.Manifest, spec v1beta2.KymaSpec) preparedRuntime {
	t.Helper()
	ctx := t.Context()
	for _, o := range sampleObjects(t) {
		o.SetLabels(merge(o.GetLabels(), map[string]string{shared.ManagedByLabel: publicManagedBy, "app.kubernetes.io/part-of": "Kyma"}))
		o.SetAnnotations(merge(o.GetAnnotations(), map[string]string{publicOwnedBy: harness.Namespace + "/" + ours.Name}))
		require.NoError(t, rt.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(o), client.FieldOwner(publicApplier), client.ForceOwnership))
	}
	var crErr error
	created := assert.Eventually(t, func() bool {
		cr := ours.Spec.Resource.DeepCopy()
		cr.SetResourceVersion("")
		if cr.GetNamespace() == "" {
			cr.SetNamespace(shared.DefaultRuntimeNamespace)
		}
		crErr = rt.Client.Create(ctx, cr, client.FieldOwner(publicCRManager))
		return crErr == nil || apierrors.IsAlreadyExists(crErr)
	}, timeout, tick)
	require.True(t, created, "the default CR is created once its CRD serves: %v", crErr)

	runtimeKyma := &v1beta2.Kyma{
		ObjectMeta: metav1.ObjectMeta{Name: shared.DefaultRuntimeKymaName, Namespace: shared.DefaultRuntimeNamespace,
			Labels:      map[string]string{shared.ManagedByLabel: publicManagedBy, shared.WatchedByLabel: publicManagedBy, shared.RuntimeIDLabel: rt.RuntimeID},
			Annotations: map[string]string{publicOwnedBy: harness.Namespace + "/" + rt.KymaName}},
		Spec: *spec.DeepCopy(),
	}
	require.NoError(t, installRuntimeCRDs(t, rt))
	var kymaErr error
	created = assert.Eventually(t, func() bool {
		kymaErr = rt.Client.Create(ctx, runtimeKyma.DeepCopy(), client.FieldOwner(publicOperator))
		return kymaErr == nil || apierrors.IsAlreadyExists(kymaErr)
	}, timeout, tick)
	require.True(t, created, "the runtime Kyma is created once its CRD serves: %v", kymaErr)
	catalogCopy := publicCatalogCopy(t, harness.SampleModule+"-1.0.0")
	require.NoError(t, rt.Client.Create(ctx, catalogCopy, client.FieldOwner("catalog-sync")))

	var p preparedRuntime
	dep, err := deployment(t, rt, harness.SampleDeployment)
	require.NoError(t, err)
	p.deploymentUID = dep.UID
	p.users = createSwitchUsersObjects(t, rt)
	p.publicAgent = publicAgentObjects()
	for _, o := range p.publicAgent {
		require.NoError(t, rt.Client.Create(ctx, o.DeepCopy(), client.FieldOwner(shared.OperatorName)), "%s %s", o.GetKind(), o.GetName())
	}
	return p
}

func merge(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// webhookConfigurations names the runtime's ValidatingWebhookConfigurations.
func webhookConfigurations(t *testing.T, rt *harness.Runtime) []string {
	t.Helper()
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion("admissionregistration.k8s.io/v1")
	list.SetKind("ValidatingWebhookConfigurationList")
	require.NoError(t, rt.Client.List(t.Context(), list))
	var names []string
	for _, o := range list.Items {
		names = append(names, o.GetName())
	}
	slices.Sort(names)
	return names
}

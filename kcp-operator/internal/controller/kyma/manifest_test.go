package kyma_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	kymactrl "github.com/lifecycle-manager/kcp-operator/internal/controller/kyma"
	"github.com/lifecycle-manager/kcp-operator/internal/controller/manifest"
	"github.com/lifecycle-manager/kcp-operator/internal/descriptor"
	"github.com/lifecycle-manager/kcp-operator/internal/testing/testmodule"
)

func eventuallyManifest(t *testing.T, name, what string, check func(*v1beta2.Manifest) bool) *v1beta2.Manifest {
	t.Helper()
	var last *v1beta2.Manifest
	ok := waitFor(timeout, func() bool {
		mf, err := getManifest(t, name)
		if err != nil {
			return false
		}
		last = mf
		return check(mf)
	})
	if !ok {
		logOperatorAbout(t, name)
		require.FailNow(t, "Manifest "+name+" never reached: "+what, "state %q, lastOperation %q, conditions %+v",
			last.Status.State, last.Status.LastOperation.Operation, last.Status.Conditions)
	}
	return last
}

// appliedAll is a Manifest whose apply of its n objects is done: status.synced
// alone lists them already before the apply (the record written first).
func appliedAll(n int) func(*v1beta2.Manifest) bool {
	return func(mf *v1beta2.Manifest) bool { return mf.Status.Applied != "" && len(mf.Status.Synced) == n }
}

func manifestState(s shared.State) func(*v1beta2.Manifest) bool {
	return func(mf *v1beta2.Manifest) bool { return mf.Status.State == s }
}

// runtimeObject reads an object from the runtime and returns the error.
func runtimeObject(t *testing.T, apiVersion, kind, ns, name string) error {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	return runtimeEnv.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, u)
}

func TestModuleIsInstalledAndFollowsItsCR(t *testing.T) {
	publish(t, module{Name: "victor", Version: "1.0.0", Data: defaultCR("Victor")})
	releaseMeta(t, "victor", map[string]string{"regular": "1.0.0"})
	newKyma(t, "install", func(k *v1beta2.Kyma) { k.Spec.Modules = []v1beta2.Module{{Name: "victor"}} })

	mf := eventuallyManifest(t, "install-victor", "resources applied", func(mf *v1beta2.Manifest) bool {
		return mf.Status.Applied != "" && len(mf.Status.Synced) == 3
	})
	assert.Equal(t, shared.StateProcessing, mf.Status.State, "waiting for the module CR and the Deployment")
	assert.True(t, appliedFinalizer(mf), "the Manifest is created with its finalizer, not patched afterwards")
	crd := &apiextensionsv1.CustomResourceDefinition{}
	require.NoError(t, runtimeEnv.Client.Get(t.Context(), client.ObjectKey{Name: "victors." + testGroup}, crd))
	dep := &appsv1.Deployment{}
	require.NoError(t, runtimeEnv.Client.Get(t.Context(), client.ObjectKey{Namespace: "install", Name: "victor-operator"}, dep),
		"namespaced objects without a namespace go to the runtime namespace")
	assert.Equal(t, shared.OperatorName, dep.Labels[shared.ManagedByLabel])
	assert.Equal(t, "victor", dep.Labels[shared.ModuleNameLabel])
	require.Eventually(t, func() bool {
		err := runtimeObject(t, testGroup+"/v1", "Victor", "install", "default")
		return err == nil
	}, timeout, tick, "the default CR is created once its CRD is established")

	playModuleOperator(t, "install", "victor", "Ready", true)
	mf = eventuallyManifest(t, "install-victor", "Ready", manifestState(shared.StateReady))
	for _, c := range []string{v1beta2.ConditionResources, v1beta2.ConditionModuleCR, v1beta2.ConditionInstallation} {
		assert.True(t, meta.IsStatusConditionTrue(mf.Status.Conditions, c), c)
	}
	eventuallyKyma(t, "install", "Ready", stateIs(shared.StateReady))
	assertInstallEvents(t, "install", "install-victor")

	playModuleOperator(t, "install", "victor", "Warning", true)
	nudgeManifest(t, "install-victor")
	mf = eventuallyManifest(t, "install-victor", "Warning", manifestState(shared.StateWarning))
	assert.Contains(t, mf.Status.LastOperation.Operation, "Victor install/default reports Warning")
	k := eventuallyKyma(t, "install", "Warning", stateIs(shared.StateWarning))
	assert.Contains(t, moduleStatus(k, "victor").Message, "reports Warning")
}

// appliedFinalizer reports whether the Kyma controller's apply set the
// Manifest's finalizer.
func appliedFinalizer(mf *v1beta2.Manifest) bool {
	for _, e := range mf.ManagedFields {
		if e.Manager == kymactrl.FieldOwner && e.Operation == metav1.ManagedFieldsOperationApply && e.FieldsV1 != nil &&
			strings.Contains(e.FieldsV1.GetRawString(), shared.ManifestFinalizer) {
			return true
		}
	}
	return false
}

// assertInstallEvents checks the Events of a first install: the Kyma says
// it is Ready; the Manifest, whose install went well, says nothing — its
// status tells the steps, and at 1,000 runtimes an Event per step was a
// quarter of the operator's KCP requests.
func assertInstallEvents(t *testing.T, kyma, manifest string) {
	t.Helper()
	require.Eventually(t, func() bool { return hasEvent(t, kyma, "StateReady") }, timeout, tick)
	for _, name := range []string{kyma, manifest} {
		assert.False(t, hasEvent(t, name, "StateProcessing"), "%s: no Event for being picked up", name)
	}
	for _, reason := range []string{"StateReady", "Applied"} {
		assert.False(t, hasEvent(t, manifest, reason), "a first install needs no Manifest Event %s", reason)
	}
	assert.False(t, hasEvent(t, kyma, "ManifestCreated"))
}

// TestNewVersionIsAppliedAndPruned: a new version applies its objects,
// deletes those it no longer renders and removes from the objects it keeps
// the fields it no longer sets — also from objects the first install
// created rather than applied.
func TestNewVersionIsAppliedAndPruned(t *testing.T) {
	kept := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: whiskey-kept}\ndata: {%s}\n"
	publish(t, module{Name: "whiskey", Version: "1.0.0", Extra: []string{fmt.Sprintf(kept, "stays: a, dropped: b")}})
	publish(t, module{Name: "whiskey", Version: "2.0.0", OmitConfigMap: true,
		Extra: []string{"apiVersion: v1\nkind: Secret\nmetadata: {name: whiskey-v2}\nstringData: {a: b}\n", fmt.Sprintf(kept, "stays: a")}})
	releaseMeta(t, "whiskey", map[string]string{"regular": "1.0.0"})
	newKyma(t, "upgrade", func(k *v1beta2.Kyma) { k.Spec.Modules = []v1beta2.Module{{Name: "whiskey"}} })
	require.Eventually(t, func() bool {
		err := runtimeObject(t, "v1", "ConfigMap", "upgrade", "whiskey-config")
		return err == nil
	}, timeout, tick, "version 1 is installed")

	mrm := &v1beta2.ModuleReleaseMeta{}
	require.NoError(t, kcp.Client.Get(t.Context(), client.ObjectKey{Namespace: kcpNamespace, Name: "whiskey"}, mrm))
	mrm.Spec.Channels = []v1beta2.ChannelVersionAssignment{{Channel: "regular", Version: "2.0.0"}}
	require.NoError(t, kcp.Client.Update(t.Context(), mrm))

	require.Eventually(t, func() bool {
		secretErr := runtimeObject(t, "v1", "Secret", "upgrade", "whiskey-v2")
		cmErr := runtimeObject(t, "v1", "ConfigMap", "upgrade", "whiskey-config")
		return secretErr == nil && apierrors.IsNotFound(cmErr)
	}, timeout, tick, "version 2's objects are applied and version 1's ConfigMap is pruned")
	dep := &appsv1.Deployment{}
	require.NoError(t, runtimeEnv.Client.Get(t.Context(), client.ObjectKey{Namespace: "upgrade", Name: "whiskey-operator"}, dep))
	assert.Equal(t, "registry.example.com/kyma/whiskey-operator:2.0.0", dep.Spec.Template.Spec.Containers[0].Image)
	cm := &corev1.ConfigMap{}
	require.NoError(t, runtimeEnv.Client.Get(t.Context(), client.ObjectKey{Namespace: "upgrade", Name: "whiskey-kept"}, cm))
	assert.Equal(t, map[string]string{"stays": "a"}, cm.Data, "the field version 2 no longer sets is removed")
	mf, err := getManifest(t, "upgrade-whiskey")
	require.NoError(t, err)
	assert.Equal(t, "2.0.0", mf.Spec.Version)
	require.Eventually(t, func() bool { return hasEvent(t, "upgrade-whiskey", "Applied") }, timeout, tick,
		"changing a module in place is worth an Event")
}

func TestLocalizedImagesAndSkipReconciliation(t *testing.T) {
	publish(t, module{Name: "xray", Version: "1.0.0"})
	releaseMeta(t, "xray", map[string]string{"regular": "1.0.0"})
	newKyma(t, "localized", func(k *v1beta2.Kyma) { k.Spec.Modules = []v1beta2.Module{{Name: "xray"}} })
	eventuallyManifest(t, "localized-xray", "installed", appliedAll(3))

	updateManifest(t, "localized-xray", func(mf *v1beta2.Manifest) {
		mf.Spec.LocalizedImages = []string{"mirror.example.com/kyma/xray-operator:1.0.0-mirrored"}
	})
	require.Eventually(t, func() bool {
		dep := &appsv1.Deployment{}
		err := runtimeEnv.Client.Get(t.Context(), client.ObjectKey{Namespace: "localized", Name: "xray-operator"}, dep)
		return err == nil && dep.Spec.Template.Spec.Containers[0].Image == "mirror.example.com/kyma/xray-operator:1.0.0-mirrored"
	}, timeout, tick, "images are rewritten to the localized ones")

	// With skip-reconciliation, a deleted module object stays deleted.
	updateManifest(t, "localized-xray", func(mf *v1beta2.Manifest) { mf.Labels[shared.SkipReconciliationLabel] = "true" })
	// Reconciles that start from here see the label; one that read the
	// Manifest before may still be applying, on a slow machine for a while:
	// once no Manifest reconcile runs, none that missed the label is left.
	require.Eventually(t, func() bool {
		mf := &v1beta2.Manifest{}
		err := operatorClient.Get(t.Context(), client.ObjectKey{Namespace: kcpNamespace, Name: "localized-xray"}, mf)
		return err == nil && mf.Labels[shared.SkipReconciliationLabel] == "true"
	}, timeout, tick, "the operator sees the label")
	require.Eventually(t, func() bool { return activeWorkers(t, "manifest") == 0 }, timeout, 10*time.Millisecond,
		"the reconciles that started before the label end")
	cm := &corev1.ConfigMap{}
	require.NoError(t, runtimeEnv.Client.Get(t.Context(), client.ObjectKey{Namespace: "localized", Name: "xray-config"}, cm))
	require.NoError(t, runtimeEnv.Client.Delete(t.Context(), cm))
	updateManifest(t, "localized-xray", func(mf *v1beta2.Manifest) { // a change that would trigger a reconcile
		mf.Spec.LocalizedImages = append(mf.Spec.LocalizedImages, "mirror.example.com/other:1")
	})
	assert.Never(t, func() bool {
		err := runtimeObject(t, "v1", "ConfigMap", "localized", "xray-config")
		return err == nil
	}, 2*time.Second, tick, "a skipped Manifest is left alone")

	updateManifest(t, "localized-xray", func(mf *v1beta2.Manifest) { delete(mf.Labels, shared.SkipReconciliationLabel) })
	require.Eventually(t, func() bool {
		err := runtimeObject(t, "v1", "ConfigMap", "localized", "xray-config")
		return err == nil
	}, timeout, tick, "without the label the Manifest repairs its module")
}

func TestDeletionWaitsForUserCRs(t *testing.T) {
	publish(t, module{Name: "yankee", Version: "1.0.0", Data: defaultCR("Yankee")})
	releaseMeta(t, "yankee", map[string]string{"regular": "1.0.0"})
	newKyma(t, "blocked", func(k *v1beta2.Kyma) { k.Spec.Modules = []v1beta2.Module{{Name: "yankee"}} })
	require.Eventually(t, func() bool {
		err := runtimeObject(t, testGroup+"/v1", "Yankee", "blocked", "default")
		return err == nil
	}, timeout, tick, "the default CR exists")
	mine := &unstructured.Unstructured{Object: defaultCR("Yankee")}
	mine.SetName("mine")
	mine.SetNamespace("blocked")
	require.NoError(t, runtimeEnv.Client.Create(t.Context(), mine))

	updateKyma(t, "blocked", func(k *v1beta2.Kyma) { k.Spec.Modules = nil })

	mf := eventuallyManifest(t, "blocked-yankee", "blocked", manifestState(shared.StateWarning))
	assert.Contains(t, mf.Status.LastOperation.Operation, "blocked by resources of the module's kinds that users created: Yankee blocked/mine")
	err := runtimeObject(t, testGroup+"/v1", "Yankee", "blocked", "default")
	assert.True(t, apierrors.IsNotFound(err), "the default CR went first")
	err = runtimeObject(t, "apps/v1", "Deployment", "blocked", "yankee-operator")
	assert.NoError(t, err, "the module stays while it is blocked")
	eventuallyKyma(t, "blocked", "shows the module's removal blocked", func(k *v1beta2.Kyma) bool {
		ms := moduleStatus(k, "yankee")
		return ms != nil && ms.State == shared.StateWarning && strings.Contains(ms.Message, "Yankee blocked/mine") &&
			k.Status.State == shared.StateWarning
	})

	require.NoError(t, runtimeEnv.Client.Delete(t.Context(), mine))
	require.Eventually(t, func() bool {
		_, mfErr := getManifest(t, "blocked-yankee")
		depErr := runtimeObject(t, "apps/v1", "Deployment", "blocked", "yankee-operator")
		return apierrors.IsNotFound(mfErr) && apierrors.IsNotFound(depErr)
	}, timeout, tick, "once the user's CR is gone, the module is removed")
	eventuallyKyma(t, "blocked", "lists the module no more", func(k *v1beta2.Kyma) bool { return moduleStatus(k, "yankee") == nil })
	crd := &apiextensionsv1.CustomResourceDefinition{}
	err = runtimeEnv.Client.Get(t.Context(), client.ObjectKey{Name: "yankees." + testGroup}, crd)
	assert.True(t, apierrors.IsNotFound(err) || !crd.DeletionTimestamp.IsZero(), "the CRD is removed last")
}

func TestRegistryOutageAndCorruptLayers(t *testing.T) {
	publish(t, module{Name: "zulu", Version: "1.0.0"})
	releaseMeta(t, "zulu", map[string]string{"regular": "1.0.0"})
	publish(t, module{Name: "quartz", Version: "1.0.0"})
	releaseMeta(t, "quartz", map[string]string{"regular": "1.0.0"})
	tmpl := &v1beta2.ModuleTemplate{}
	require.NoError(t, kcp.Client.Get(t.Context(), client.ObjectKey{Namespace: kcpNamespace, Name: "quartz-1.0.0"}, tmpl))
	d, err := descriptor.Parse(tmpl.Spec.Descriptor.Raw)
	require.NoError(t, err)
	layer, err := d.LayerOf("raw-manifest")
	require.NoError(t, err)
	defer reg.Corrupt(layer.Digest)()

	reg.Down.Store(true)
	newKyma(t, "outage", func(k *v1beta2.Kyma) { k.Spec.Modules = []v1beta2.Module{{Name: "zulu"}} })
	mf := eventuallyManifest(t, "outage-zulu", "Error", manifestState(shared.StateError))
	cond := meta.FindStatusCondition(mf.Status.Conditions, v1beta2.ConditionResources)
	require.NotNil(t, cond)
	assert.Equal(t, "RegistryUnreachable", cond.Reason)
	reg.Down.Store(false)
	eventuallyManifest(t, "outage-zulu", "installed after the outage", appliedAll(3))

	newKyma(t, "corrupt", func(k *v1beta2.Kyma) { k.Spec.Modules = []v1beta2.Module{{Name: "quartz"}} })
	mf = eventuallyManifest(t, "corrupt-quartz", "Error", manifestState(shared.StateError))
	cond = meta.FindStatusCondition(mf.Status.Conditions, v1beta2.ConditionResources)
	require.NotNil(t, cond)
	assert.Equal(t, "DigestMismatch", cond.Reason)
	assert.Contains(t, mf.Status.LastOperation.Operation, layer.Digest)
	k := eventuallyKyma(t, "corrupt", "Error", stateIs(shared.StateError))
	assert.Contains(t, moduleStatus(k, "quartz").Message, "does not match its digest", "the Kyma tells why")
}

// nudgeManifest enqueues a Manifest as the push path does when a module
// resource changes in the runtime (the agent is not running in this suite).
func nudgeManifest(t *testing.T, name string) {
	t.Helper()
	updateManifest(t, name, func(mf *v1beta2.Manifest) {
		mf.Labels["test.lifecycle-manager/nudge"] = time.Now().Format("150405.000000")
	})
}

func TestHelmChartModuleWithConfigValues(t *testing.T) {
	require.NoError(t, testmodule.HelmModule{Name: "kappa", Version: "1.0.0", Config: map[string]any{"replicas": 3}}.
		Publish(t.Context(), kcp.Client, reg.Host, kcpNamespace))
	releaseMeta(t, "kappa", map[string]string{"regular": "1.0.0"})
	newKyma(t, "helm", func(k *v1beta2.Kyma) { k.Spec.Modules = []v1beta2.Module{{Name: "kappa"}} })

	dep := &appsv1.Deployment{}
	require.Eventually(t, func() bool {
		return runtimeEnv.Client.Get(t.Context(), client.ObjectKey{Namespace: "helm", Name: "kappa-operator"}, dep) == nil
	}, timeout, tick, "the chart is rendered and applied")
	require.NotNil(t, dep.Spec.Replicas)
	assert.Equal(t, int32(3), *dep.Spec.Replicas, "the config layer's values override the chart's defaults")
	assert.Equal(t, "kappa", dep.Labels[shared.ModuleNameLabel])
	playModuleOperator(t, "helm", "kappa", "", false)
	eventuallyManifest(t, "helm-kappa", "Ready", manifestState(shared.StateReady))
}

func TestUnreachableRuntimeFailsTheManifest(t *testing.T) {
	publish(t, module{Name: "lambda", Version: "1.0.0"})
	releaseMeta(t, "lambda", map[string]string{"regular": "1.0.0"})
	newKyma(t, "lost", func(k *v1beta2.Kyma) { k.Spec.Modules = []v1beta2.Module{{Name: "lambda"}} })
	eventuallyManifest(t, "lost-lambda", "installed", appliedAll(3))

	putKubeconfig(t, "lost", closedPortKubeconfig(t))
	nudgeManifest(t, "lost-lambda")
	mf := eventuallyManifest(t, "lost-lambda", "Error", manifestState(shared.StateError))
	assert.Contains(t, mf.Status.LastOperation.Operation, "connection refused")
	assert.Len(t, mf.Status.Synced, 3, "what was installed stays recorded")
}

// TestConfigLayerOfRawManifestsIsToldNotDropped: raw manifests take no Helm
// values, so a config layer on such a Manifest is left out of the install;
// a Warning Event says so instead of dropping it silently, and the module
// stays installed.
func TestConfigLayerOfRawManifestsIsToldNotDropped(t *testing.T) {
	publish(t, module{Name: "sigma", Version: "1.0.0"})
	releaseMeta(t, "sigma", map[string]string{"regular": "1.0.0"})
	newKyma(t, "rawconfig", func(k *v1beta2.Kyma) { k.Spec.Modules = []v1beta2.Module{{Name: "sigma"}} })
	playModuleOperator(t, "rawconfig", "sigma", "", false)
	eventuallyManifest(t, "rawconfig-sigma", "Ready", manifestState(shared.StateReady))
	assert.False(t, hasEvent(t, "rawconfig-sigma", manifest.ReasonConfigIgnored))

	updateManifest(t, "rawconfig-sigma", func(mf *v1beta2.Manifest) {
		mf.Spec.Config = &v1beta2.ImageSpec{Repo: reg.Host + "/modules", Name: "sigma-config", Ref: "sha256:" + strings.Repeat("0", 64)}
	})
	require.Eventually(t, func() bool { return hasEvent(t, "rawconfig-sigma", manifest.ReasonConfigIgnored) }, timeout, tick,
		"a Warning Event tells that the values are not used")
	eventuallyManifest(t, "rawconfig-sigma", "still Ready", manifestState(shared.StateReady))
}

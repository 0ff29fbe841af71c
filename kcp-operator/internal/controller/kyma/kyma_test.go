package kyma_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	eventsv1 "k8s.io/api/events/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
)

func stateIs(s shared.State) func(*v1beta2.Kyma) bool {
	return func(k *v1beta2.Kyma) bool { return k.Status.State == s }
}

func TestRuntimeIsPreparedAndStatusMirrored(t *testing.T) {
	newKyma(t, "prepared")

	k := eventuallyKyma(t, "prepared", "Ready", stateIs(shared.StateReady))
	assert.Contains(t, k.Finalizers, shared.KymaFinalizer)
	assert.Equal(t, shared.OperatorName, k.Labels[shared.ManagedByLabel])
	assert.Equal(t, "regular", k.Status.ActiveChannel)
	for _, c := range []string{v1beta2.ConditionModules, v1beta2.ConditionRuntime, v1beta2.ConditionModuleCatalog} {
		assert.True(t, meta.IsStatusConditionTrue(k.Status.Conditions, c), "condition %s", c)
	}

	for _, name := range []string{"kymas", "moduletemplates", "modulereleasemetas"} {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		require.NoError(t, runtimeEnv.Client.Get(t.Context(), client.ObjectKey{Name: name + ".operator.kyma-project.io"}, crd))
	}
	require.Eventually(t, func() bool {
		rk, err := runtimeKyma(t, "prepared")
		return err == nil && rk.Status.State == shared.StateReady
	}, timeout, tick, "the runtime Kyma mirrors the KCP status")
	rk, err := runtimeKyma(t, "prepared")
	require.NoError(t, err)
	assert.Equal(t, shared.WatchedByKymaValue, rk.Labels[shared.WatchedByLabel], "the agent's watcher selects runtime Kymas by this label")
	assert.Equal(t, "runtime-prepared", rk.Labels[shared.RuntimeIDLabel])

	require.Eventually(t, func() bool {
		return gaugeValue(t, "lifecycle_manager_kymas", map[string]string{"state": "Ready"}) >= 1
	}, timeout, tick, "Ready Kymas are counted")
	assert.Equal(t, -1.0, gaugeValue(t, "lifecycle_manager_kyma_state", map[string]string{"kyma": "prepared"}),
		"a Ready Kyma has no series of its own")
}

// gaugeValue reads one series of the operator's metrics; -1 when absent.
func gaugeValue(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	return gaugeIn(t, metricsRegistry, name, labels)
}

// gaugeIn reads one series of the gauges g gathers; -1 when absent.
func gaugeIn(t *testing.T, g prometheus.Gatherer, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := g.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	next:
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if want, ok := labels[l.GetName()]; ok && want != l.GetValue() {
					continue next
				}
			}
			return m.GetGauge().GetValue()
		}
	}
	return -1
}

func TestModuleAddedInTheRuntimeIsInstalled(t *testing.T) {
	publish(t, module{Name: "alpha", Version: "1.0.0", Data: defaultCR("Alpha")})
	releaseMeta(t, "alpha", map[string]string{"regular": "1.0.0"})
	newKyma(t, "admin-adds")
	eventuallyKyma(t, "admin-adds", "Ready", stateIs(shared.StateReady))

	updateRuntimeKyma(t, "admin-adds", func(rk *v1beta2.Kyma) {
		rk.Spec.Modules = append(rk.Spec.Modules, v1beta2.Module{Name: "alpha"})
	})
	nudge(t, "admin-adds")

	k := eventuallyKyma(t, "admin-adds", "alpha copied from the runtime", func(k *v1beta2.Kyma) bool {
		return len(k.Spec.Modules) == 1 && moduleStatus(k, "alpha") != nil && moduleStatus(k, "alpha").Manifest != nil
	})
	ms := moduleStatus(k, "alpha")
	assert.Equal(t, shared.StateProcessing, ms.State, "the module waits for its Manifest to install it")
	assert.Equal(t, "kyma-project.io/module/alpha", ms.FQDN)
	assert.Equal(t, "1.0.0", ms.Version)
	assert.Equal(t, "alpha-1.0.0", ms.Template.Name)

	mf := &v1beta2.Manifest{}
	require.NoError(t, kcp.Client.Get(t.Context(), client.ObjectKey{Namespace: kcpNamespace, Name: "admin-adds-alpha"}, mf))
	assert.True(t, metav1.IsControlledBy(mf, k), "the Kyma owns its Manifests")
	assert.Equal(t, "1.0.0", mf.Spec.Version)
	assert.Equal(t, "raw-manifest", mf.Spec.Install.Name)
	var install v1beta2.ImageSpec
	require.NoError(t, json.Unmarshal(mf.Spec.Install.Source.Raw, &install))
	assert.Equal(t, reg.Host+"/modules/component-descriptors", install.Repo)
	assert.Equal(t, "kyma-project.io/module/alpha", install.Name)
	assert.True(t, strings.HasPrefix(install.Ref, "sha256:"))
	assert.Equal(t, v1beta2.RefTypeRawManifest, install.Type)
	require.NotNil(t, mf.Spec.Resource)
	assert.Equal(t, "Alpha", mf.Spec.Resource.GetKind())
	assert.Equal(t, "regular", mf.Labels[shared.ChannelLabel])

	playModuleOperator(t, "admin-adds", "alpha", "Ready", true)
	eventuallyKyma(t, "admin-adds", "Ready with alpha", stateIs(shared.StateReady))
	require.Eventually(t, func() bool {
		rk, err := runtimeKyma(t, "admin-adds")
		return err == nil && len(rk.Status.Modules) == 1 && rk.Status.Modules[0].State == shared.StateReady
	}, timeout, tick, "the runtime Kyma shows the module Ready")
}

func TestKCPEditReachesTheRuntime(t *testing.T) {
	publish(t, module{Name: "bravo", Version: "1.0.0"})
	releaseMeta(t, "bravo", map[string]string{"regular": "1.0.0"})
	newKyma(t, "kcp-edits")
	eventuallyKyma(t, "kcp-edits", "Ready", stateIs(shared.StateReady))

	updateKyma(t, "kcp-edits", func(k *v1beta2.Kyma) { k.Spec.Modules = []v1beta2.Module{{Name: "bravo"}} })

	require.Eventually(t, func() bool {
		rk, err := runtimeKyma(t, "kcp-edits")
		return err == nil && len(rk.Spec.Modules) == 1 && rk.Spec.Modules[0].Name == "bravo"
	}, timeout, tick, "an edit of the KCP Kyma reaches the runtime Kyma")
	k := eventuallyKyma(t, "kcp-edits", "bravo kept", func(k *v1beta2.Kyma) bool { return moduleStatus(k, "bravo") != nil })
	assert.Len(t, k.Spec.Modules, 1, "the KCP edit must not be undone by the runtime")
}

func TestChannelPrecedence(t *testing.T) {
	for _, v := range []string{"1.0.0", "2.0.0", "3.0.0"} {
		publish(t, module{Name: "charlie", Version: v})
	}
	releaseMeta(t, "charlie", map[string]string{"regular": "1.0.0", "fast": "2.0.0", "experimental": "3.0.0"})

	tests := []struct {
		kyma, kymaChannel, moduleChannel, wantChannel, wantVersion string
	}{
		{"channel-module-wins", "fast", "experimental", "experimental", "3.0.0"},
		{"channel-from-kyma", "fast", "", "fast", "2.0.0"},
		{"channel-default", "", "", "regular", "1.0.0"},
	}
	for _, tc := range tests {
		t.Run(tc.kyma, func(t *testing.T) {
			newKyma(t, tc.kyma, func(k *v1beta2.Kyma) {
				k.Spec.Channel = tc.kymaChannel
				k.Spec.Modules = []v1beta2.Module{{Name: "charlie", Channel: tc.moduleChannel}}
			})
			k := eventuallyKyma(t, tc.kyma, "charlie resolved", func(k *v1beta2.Kyma) bool {
				ms := moduleStatus(k, "charlie")
				return ms != nil && ms.Version != ""
			})
			ms := moduleStatus(k, "charlie")
			assert.Equal(t, tc.wantChannel, ms.Channel)
			assert.Equal(t, tc.wantVersion, ms.Version)
			assert.Equal(t, "charlie-"+tc.wantVersion, ms.Template.Name)
		})
	}
}

func TestLegacyResolutionPaths(t *testing.T) {
	// No ModuleReleaseMeta: templates carry their channel themselves.
	publish(t, module{Name: "delta", Version: "1.0.0", Channel: "regular", TemplateName: "delta-regular",
		Labels: map[string]string{shared.ModuleNameLabel: "delta"}})
	publish(t, module{Name: "delta", Version: "1.1.0", Channel: "fast", TemplateName: "delta-fast"})

	tests := []struct {
		kyma, listed, channel, wantTemplate string
	}{
		{"legacy-by-module-name", "delta", "regular", "delta-regular"},
		{"legacy-by-module-channel", "delta", "fast", "delta-fast"},
		{"legacy-by-template-name", "delta-fast", "regular", "delta-fast"},
		{"legacy-by-namespaced-name", kcpNamespace + "/delta-regular", "fast", "delta-regular"},
		{"legacy-by-fqdn", "kyma-project.io/module/delta", "fast", "delta-fast"},
	}
	for _, tc := range tests {
		t.Run(tc.kyma, func(t *testing.T) {
			newKyma(t, tc.kyma, func(k *v1beta2.Kyma) {
				k.Spec.Modules = []v1beta2.Module{{Name: tc.listed, Channel: tc.channel}}
			})
			k := eventuallyKyma(t, tc.kyma, "resolved", func(k *v1beta2.Kyma) bool {
				ms := moduleStatus(k, tc.listed)
				return ms != nil && ms.Template != nil
			})
			assert.Equal(t, tc.wantTemplate, moduleStatus(k, tc.listed).Template.Name)
		})
	}
}

func TestUnknownModuleFailsAlone(t *testing.T) {
	publish(t, module{Name: "echo", Version: "1.0.0"})
	releaseMeta(t, "echo", map[string]string{"regular": "1.0.0"})
	newKyma(t, "unknown", func(k *v1beta2.Kyma) {
		k.Spec.Modules = []v1beta2.Module{{Name: "echo"}, {Name: "nosuchmodule"}, {Name: "echo-typo", Channel: "fast"}}
	})
	k := eventuallyKyma(t, "unknown", "Error", stateIs(shared.StateError))
	assert.Equal(t, shared.StateProcessing, moduleStatus(k, "echo").State, "the other modules proceed")
	bad := moduleStatus(k, "nosuchmodule")
	assert.Equal(t, shared.StateError, bad.State)
	assert.Equal(t, `module "nosuchmodule": no ModuleReleaseMeta and no ModuleTemplate in namespace kcp-system names this module`, bad.Message)

	require.Eventually(t, func() bool { return hasEvent(t, "unknown", "ModuleResolutionFailed") }, timeout, tick)
}

// A module that stops resolving stays installed however often the Kyma is
// reconciled: its Error status names the Manifest that stays, which the
// next reconcile keeps again.
func TestAModuleThatStopsResolvingStaysInstalled(t *testing.T) {
	kymaWithModule(t, "unresolved", module{Name: "keeper", Version: "1.0.0"})
	eventuallyManifest(t, "unresolved-keeper", "installed", appliedAll(3))

	updateKyma(t, "unresolved", func(k *v1beta2.Kyma) { k.Spec.Modules[0].Channel = "nosuchchannel" })
	k := eventuallyKyma(t, "unresolved", "the module Error", func(k *v1beta2.Kyma) bool {
		ms := moduleStatus(k, "keeper")
		return ms != nil && ms.State == shared.StateError
	})
	ms := moduleStatus(k, "keeper")
	require.NotNil(t, ms.Manifest, "the status names the Manifest that stays")
	assert.Equal(t, "unresolved-keeper", ms.Manifest.Name)
	assert.Equal(t, "1.0.0", ms.Version, "the installed version")
	// An Error Kyma is reconciled every second (--requeue-error in this suite).
	assert.Never(t, func() bool {
		_, err := getManifest(t, "unresolved-keeper")
		return apierrors.IsNotFound(err)
	}, 5*time.Second, tick, "the Manifest stays through the next reconciles")
}

func TestMissingChannelIsNamed(t *testing.T) {
	publish(t, module{Name: "foxtrot", Version: "1.0.0"})
	releaseMeta(t, "foxtrot", map[string]string{"regular": "1.0.0"})
	newKyma(t, "no-channel", func(k *v1beta2.Kyma) {
		k.Spec.Modules = []v1beta2.Module{{Name: "foxtrot", Channel: "fast"}}
	})
	k := eventuallyKyma(t, "no-channel", "Error", stateIs(shared.StateError))
	assert.Contains(t, moduleStatus(k, "foxtrot").Message, `has no version for channel "fast" (channels: regular)`)
}

func TestBetaAndInternalGating(t *testing.T) {
	publish(t, module{Name: "golf", Version: "1.0.0"})
	releaseMeta(t, "golf", map[string]string{"regular": "1.0.0"}, func(m *v1beta2.ModuleReleaseMeta) { m.Spec.Beta = true })
	publish(t, module{Name: "hotel", Version: "1.0.0", Channel: "regular", Labels: map[string]string{shared.InternalLabel: "true"}})

	newKyma(t, "gated", func(k *v1beta2.Kyma) { k.Spec.Modules = []v1beta2.Module{{Name: "golf"}, {Name: "hotel"}} })
	k := eventuallyKyma(t, "gated", "Error", stateIs(shared.StateError))
	assert.Contains(t, moduleStatus(k, "golf").Message, "beta module")
	assert.Contains(t, moduleStatus(k, "hotel").Message, "internal module")

	newKyma(t, "allowed", func(k *v1beta2.Kyma) {
		k.Labels[shared.BetaLabel] = "true"
		k.Labels[shared.InternalLabel] = "true"
		k.Spec.Modules = []v1beta2.Module{{Name: "golf"}, {Name: "hotel"}}
	})
	k = eventuallyKyma(t, "allowed", "both resolved", func(k *v1beta2.Kyma) bool {
		return len(k.Status.Modules) == 2 && k.Status.Modules[0].Template != nil && k.Status.Modules[1].Template != nil
	})
	assert.Equal(t, shared.StateProcessing, k.Status.State)
}

// hasEvent reports whether an Event (events.k8s.io) about the Kyma has the reason.
func hasEvent(t *testing.T, kyma, reason string) bool {
	t.Helper()
	var list eventsv1.EventList
	if err := kcp.Client.List(t.Context(), &list, client.InNamespace(kcpNamespace)); err != nil {
		return false
	}
	for _, e := range list.Items {
		if e.Regarding.Name == kyma && e.Reason == reason {
			return true
		}
	}
	return false
}

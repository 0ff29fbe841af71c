package kyma_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	kymactrl "github.com/lifecycle-manager/kcp-operator/internal/controller/kyma"
)

// maintenancePolicy is the suite operator's --maintenance-policy. Only the
// tests of this file write it, each the policy it needs; it is missing
// otherwise, which matters only to upgrades that require downtime.
var maintenancePolicy = filepath.Join(os.TempDir(), fmt.Sprintf("kyma-suite-maintenance-%d.yaml", os.Getpid()))

// writePolicy gives Kymas labelled region=<region> the dated window
// [begin, end) and everyone else a window in 2099.
func writePolicy(t *testing.T, region string, begin, end time.Time) {
	t.Helper()
	writePolicyText(t, fmt.Sprintf(`
rules:
  - name: test
    match: {region: %s}
    windows:
      - begin: %q
        end: %q
default: {begin: "2099-01-01T00:00:00Z", end: "2099-01-02T00:00:00Z"}
`, region, begin.UTC().Format(time.RFC3339), end.UTC().Format(time.RFC3339)))
}

func writePolicyText(t *testing.T, text string) {
	t.Helper()
	require.NoError(t, os.WriteFile(maintenancePolicy, []byte(text), 0o600))
	t.Cleanup(func() { _ = os.Remove(maintenancePolicy) })
}

// downtimeModule publishes name 1.0.0 to channel regular and 2.0.0, which
// requires downtime, to channel fast.
func downtimeModule(t *testing.T, name string) {
	t.Helper()
	publish(t, module{Name: name, Version: "1.0.0"})
	publish(t, module{Name: name, Version: "2.0.0"})
	require.Eventually(t, func() bool {
		tmpl := &v1beta2.ModuleTemplate{}
		if kcp.Client.Get(t.Context(), client.ObjectKey{Namespace: kcpNamespace, Name: name + "-2.0.0"}, tmpl) != nil {
			return false
		}
		tmpl.Spec.RequiresDowntime = true
		return kcp.Client.Update(t.Context(), tmpl) == nil
	}, timeout, tick)
	releaseMeta(t, name, map[string]string{"regular": "1.0.0", "fast": "2.0.0"})
}

// installed creates Kyma kyma with module name from regular, labelled with
// region, and waits for the Manifest of 1.0.0.
func installed(t *testing.T, kyma, name, region string, mutate ...func(*v1beta2.Kyma)) *v1beta2.Manifest {
	t.Helper()
	newKyma(t, kyma, append([]func(*v1beta2.Kyma){func(k *v1beta2.Kyma) {
		k.Labels[shared.RegionLabel] = region
		k.Spec.Modules = []v1beta2.Module{{Name: name}}
	}}, mutate...)...)
	return manifestAt(t, kyma+"-"+name, "1.0.0")
}

func manifestAt(t *testing.T, name, version string) *v1beta2.Manifest {
	t.Helper()
	var mf *v1beta2.Manifest
	require.Eventually(t, func() bool {
		var err error
		mf, err = getManifest(t, name)
		return err == nil && mf.Spec.Version == version
	}, timeout, tick, "Manifest %s at %s", name, version)
	return mf
}

func TestAnUpgradeThatRequiresDowntimeWaitsForTheWindow(t *testing.T) {
	now := time.Now()
	next := now.Add(3 * time.Hour).Truncate(time.Second)
	writePolicy(t, "closed", next, next.Add(time.Hour))
	downtimeModule(t, "tango-maint")
	before := installed(t, "maint-wait", "tango-maint", "closed")
	playModuleOperator(t, "maint-wait", "tango-maint", "Ready", false)
	eventuallyKyma(t, "maint-wait", "Ready on 1.0.0", stateIs(shared.StateReady))

	updateKyma(t, "maint-wait", func(k *v1beta2.Kyma) { k.Spec.Channel = "fast" })
	k := eventuallyKyma(t, "maint-wait", "the module waiting", func(k *v1beta2.Kyma) bool {
		ms := moduleStatus(k, "tango-maint")
		return ms != nil && ms.Maintenance && strings.Contains(ms.Message, "maintenance window")
	})
	ms := moduleStatus(k, "tango-maint")
	assert.Contains(t, ms.Message, next.UTC().Format(time.RFC3339), "the next window is named")
	assert.Contains(t, ms.Message, "policy rule test")
	assert.Contains(t, ms.Message, "skipMaintenanceWindows", "the way out is named")
	assert.Equal(t, "1.0.0", ms.Version, "the status shows what runs")
	assert.Equal(t, shared.StateReady, ms.State, "a planned wait keeps the state of what runs")
	assert.Equal(t, shared.StateReady, k.Status.State, "a release that requires downtime does not turn the Kyma Warning")
	require.Eventually(t, func() bool { return hasEvent(t, "maint-wait", kymactrl.ReasonWaitingForMaintenanceWindow) }, timeout, tick)
	mf, err := getManifest(t, "maint-wait-tango-maint")
	require.NoError(t, err)
	assert.Equal(t, "1.0.0", mf.Spec.Version, "the installed version stays")
	assert.Equal(t, before.Generation, mf.Generation, "the Manifest's spec is not changed")

	// The window opens: the next reconcile upgrades.
	writePolicy(t, "closed", now.Add(-time.Minute), now.Add(time.Hour))
	manifestAt(t, "maint-wait-tango-maint", "2.0.0")
	eventuallyKyma(t, "maint-wait", "the module upgraded", func(k *v1beta2.Kyma) bool {
		ms := moduleStatus(k, "tango-maint")
		return ms != nil && ms.Version == "2.0.0" && !ms.Maintenance && !strings.Contains(ms.Message, "maintenance window")
	})
}

func TestAnUpgradeInAnOpenWindowRunsAtOnce(t *testing.T) {
	now := time.Now()
	writePolicy(t, "open", now.Add(-time.Hour), now.Add(time.Hour))
	downtimeModule(t, "uniform-maint")
	installed(t, "maint-open", "uniform-maint", "open")
	updateKyma(t, "maint-open", func(k *v1beta2.Kyma) { k.Spec.Channel = "fast" })
	manifestAt(t, "maint-open-uniform-maint", "2.0.0")
	assert.False(t, hasEvent(t, "maint-open", kymactrl.ReasonWaitingForMaintenanceWindow))
}

func TestAFirstInstallNeverWaits(t *testing.T) {
	next := time.Now().Add(3 * time.Hour)
	writePolicy(t, "closed", next, next.Add(time.Hour))
	downtimeModule(t, "victor-maint")
	newKyma(t, "maint-first", func(k *v1beta2.Kyma) {
		k.Labels[shared.RegionLabel] = "closed"
		k.Spec.Channel = "fast"
		k.Spec.Modules = []v1beta2.Module{{Name: "victor-maint"}}
	})
	manifestAt(t, "maint-first-victor-maint", "2.0.0")
}

func TestSkipMaintenanceWindowsUpgradesAtOnce(t *testing.T) {
	next := time.Now().Add(3 * time.Hour)
	writePolicy(t, "closed", next, next.Add(time.Hour))
	downtimeModule(t, "whiskey-maint")
	installed(t, "maint-skip", "whiskey-maint", "closed", func(k *v1beta2.Kyma) { k.Spec.SkipMaintenanceWindows = true })
	updateKyma(t, "maint-skip", func(k *v1beta2.Kyma) { k.Spec.Channel = "fast" })
	manifestAt(t, "maint-skip-whiskey-maint", "2.0.0")
	assert.False(t, hasEvent(t, "maint-skip", kymactrl.ReasonWaitingForMaintenanceWindow))
}

func TestAnUnusablePolicyHoldsTheUpgradeWithAnError(t *testing.T) {
	downtimeModule(t, "xray-maint")
	before := installed(t, "maint-broken", "xray-maint", "any")
	writePolicyText(t, "default: {days: [Sat], timeBegin: \"20:00\"}\n")

	updateKyma(t, "maint-broken", func(k *v1beta2.Kyma) { k.Spec.Channel = "fast" })
	k := eventuallyKyma(t, "maint-broken", "the module Error", func(k *v1beta2.Kyma) bool {
		ms := moduleStatus(k, "xray-maint")
		return ms != nil && ms.State == shared.StateError
	})
	ms := moduleStatus(k, "xray-maint")
	assert.Contains(t, ms.Message, "maintenance policy is unusable")
	assert.Contains(t, ms.Message, "timeBegin", "the policy's problem is named")
	assert.Contains(t, ms.Message, "1.0.0 stays installed")
	assert.Equal(t, shared.StateError, k.Status.State)
	require.Eventually(t, func() bool { return hasEvent(t, "maint-broken", kymactrl.ReasonMaintenancePolicyUnusable) }, timeout, tick)
	mf, err := getManifest(t, "maint-broken-xray-maint")
	require.NoError(t, err)
	assert.Equal(t, "1.0.0", mf.Spec.Version, "nothing is upgraded")
	assert.Equal(t, before.Generation, mf.Generation)

	writePolicy(t, "any", time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	manifestAt(t, "maint-broken-xray-maint", "2.0.0")
}

package suite

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/e2e/harness"
)

// maintenanceChannel is this scenario's own channel, so that what other
// scenarios did to regular and fast does not matter.
const (
	maintenanceChannel = "maintenance"
	maintenanceRegion  = "e2e-maintenance"
)

func TestAnUpgradeThatRequiresDowntimeWaitsForTheMaintenanceWindow(t *testing.T) {
	if h.MaintenancePolicy == "" {
		t.Skip("the operator's maintenance policy is a file the harness writes in local mode only")
	}
	rt := runtime(1)
	step(t, "Given a runtime in region %s without modules", maintenanceRegion)
	withoutModules(t, rt)
	updateKyma(t, rt, func(k *v1beta2.Kyma) { k.Labels[shared.RegionLabel] = maintenanceRegion })
	t.Cleanup(func() { restoreAfterMaintenance(t, rt) })

	now := time.Now().UTC().Truncate(time.Second)
	next := now.Add(time.Hour)
	step(t, "And a maintenance policy whose window for that region closed an hour ago; the next one begins at %s", next.Format(time.RFC3339))
	writeMaintenancePolicy(t, [2]time.Time{now.Add(-2 * time.Hour), now.Add(-time.Hour)}, [2]time.Time{next, next.Add(time.Hour)})

	step(t, "And the sample module 1.0.0 installed from channel %s: a first install does not wait", maintenanceChannel)
	require.NoError(t, h.Publish(t.Context(), "1.0.0", maintenanceChannel))
	updateRuntimeKyma(t, rt, func(k *v1beta2.Kyma) {
		k.Spec.Modules = append(k.Spec.Modules, v1beta2.Module{Name: harness.SampleModule, Channel: maintenanceChannel})
	})
	eventuallyKyma(t, rt, "1.0.0 Ready", func(k *v1beta2.Kyma) bool {
		return ready(k) && len(k.Status.Modules) == 1 && k.Status.Modules[0].Version == "1.0.0"
	})

	step(t, "When the module team marks 2.0.0 as requiring downtime and rolls it out to %s", maintenanceChannel)
	patchTemplate(t.Context(), t, harness.SampleModule+"-2.0.0", `{"spec":{"requiresDowntime":true}}`)
	require.NoError(t, h.Publish(t.Context(), "2.0.0", maintenanceChannel))

	step(t, "Then the upgrade waits: the module stays Ready with maintenance: true and names the next window, 1.0.0 stays installed")
	eventuallyKyma(t, rt, "the upgrade waiting", func(k *v1beta2.Kyma) bool {
		m := k.Status.Modules
		return ready(k) && len(m) == 1 && m[0].State == shared.StateReady && m[0].Maintenance && m[0].Version == "1.0.0" &&
			strings.Contains(m[0].Message, next.Format(time.RFC3339))
	})
	require.True(t, eventRecorded(t, rt.KymaName, "WaitingForMaintenanceWindow"))
	mf := &v1beta2.Manifest{}
	require.NoError(t, h.KCP.Client.Get(t.Context(), client.ObjectKey{Namespace: harness.Namespace, Name: rt.KymaName + "-" + harness.SampleModule}, mf))
	require.Equal(t, "1.0.0", mf.Spec.Version, "the Manifest keeps the installed version")
	require.False(t, sampleSettingsExist(t, rt), "nothing of 2.0.0 is in the runtime")

	step(t, "When the policy opens a window now")
	writeMaintenancePolicy(t, [2]time.Time{now.Add(-time.Minute), now.Add(time.Hour)})

	step(t, "Then the upgrade runs: 2.0.0 is Ready with its ConfigMap in the runtime")
	eventuallyKyma(t, rt, "2.0.0 Ready", func(k *v1beta2.Kyma) bool {
		return ready(k) && len(k.Status.Modules) == 1 && k.Status.Modules[0].Version == "2.0.0"
	})
	require.True(t, sampleSettingsExist(t, rt))
}

// writeMaintenancePolicy gives the scenario's region the dated windows, and
// every other runtime the harness's open week.
func writeMaintenancePolicy(t *testing.T, windows ...[2]time.Time) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "rules:\n  - name: e2e\n    match: {region: %s}\n    windows:\n", maintenanceRegion)
	for _, w := range windows {
		fmt.Fprintf(&b, "      - {begin: %q, end: %q}\n", w[0].Format(time.RFC3339), w[1].Format(time.RFC3339))
	}
	b.WriteString(harness.OpenMaintenancePolicy)
	require.NoError(t, os.WriteFile(h.MaintenancePolicy, []byte(b.String()), 0o600))
}

func patchTemplate(ctx context.Context, t *testing.T, name, patch string) {
	t.Helper()
	tmpl := &v1beta2.ModuleTemplate{}
	tmpl.Namespace, tmpl.Name = harness.Namespace, name
	require.NoError(t, h.KCP.Client.Patch(ctx, tmpl, client.RawPatch(types.MergePatchType, []byte(patch)), client.FieldOwner("e2e-maintenance")))
}

func eventRecorded(t *testing.T, kyma, reason string) bool {
	t.Helper()
	var list eventsv1.EventList
	require.NoError(t, h.KCP.Client.List(t.Context(), &list, client.InNamespace(harness.Namespace)))
	for _, e := range list.Items {
		if e.Regarding.Name == kyma && e.Reason == reason {
			return true
		}
	}
	return false
}

// restoreAfterMaintenance leaves the runtime as the other scenarios expect
// it: the open policy, no downtime on 2.0.0, no region, no modules.
func restoreAfterMaintenance(t *testing.T, rt *harness.Runtime) {
	ctx := context.Background() // the test's context has ended
	if err := os.WriteFile(h.MaintenancePolicy, []byte(harness.OpenMaintenancePolicy), 0o600); err != nil {
		t.Errorf("restoring the maintenance policy: %v", err)
	}
	patchTemplate(ctx, t, harness.SampleModule+"-2.0.0", `{"spec":{"requiresDowntime":null}}`)
	k := &v1beta2.Kyma{}
	if err := h.KCP.Client.Get(ctx, client.ObjectKey{Namespace: harness.Namespace, Name: rt.KymaName}, k); err == nil {
		patch := client.MergeFrom(k.DeepCopy())
		delete(k.Labels, shared.RegionLabel)
		if err := h.KCP.Client.Patch(ctx, k, patch); err != nil {
			t.Errorf("removing the region label: %v", err)
		}
	}
	rk := &v1beta2.Kyma{}
	key := client.ObjectKey{Namespace: shared.DefaultRuntimeNamespace, Name: shared.DefaultRuntimeKymaName}
	if err := rt.Client.Get(ctx, key, rk); err == nil {
		patch := client.MergeFrom(rk.DeepCopy())
		rk.Spec.Modules = nil
		if err := rt.Client.Patch(ctx, rk, patch); err != nil {
			t.Errorf("removing the scenario's module: %v", err)
		}
	}
}

package kyma_test

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	manifestctrl "github.com/lifecycle-manager/kcp-operator/internal/controller/manifest"
	"github.com/lifecycle-manager/kcp-operator/internal/testing/testmodule"
)

// bombChart is the chart of the issue: 272 bytes that rendered for 12.7 s
// into 2.5 GiB inside the operator.
const bombChart = "{{ range until 4000000 }}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-{{ . }}}\ndata: {a: b}\n{{ end }}\n"

// maxRenderGrowth bounds how far the test process's peak RSS (the operator
// runs in it) may grow while the bomb is rendered; in process it grows by
// gigabytes.
const maxRenderGrowth = 256 << 20

// TestRenderBoundsKeepTheOperatorUp publishes a Helm module whose chart
// loops next to a normal one: the normal one becomes Ready, the bad one is
// Error naming the bound, and the operator's memory stays put.
func TestRenderBoundsKeepTheOperatorUp(t *testing.T) {
	baseline := resetPeakRSS(t)
	require.NoError(t, testmodule.HelmModule{Name: "rho", Version: "1.0.0"}.Publish(t.Context(), kcp.Client, reg.Host, kcpNamespace))
	require.NoError(t, testmodule.HelmModule{Name: "bomb", Version: "1.0.0", Templates: map[string]string{"bomb.yaml": bombChart}}.
		Publish(t.Context(), kcp.Client, reg.Host, kcpNamespace))
	releaseMeta(t, "rho", map[string]string{"regular": "1.0.0"})
	releaseMeta(t, "bomb", map[string]string{"regular": "1.0.0"})
	newKyma(t, "bounded", func(k *v1beta2.Kyma) { k.Spec.Modules = []v1beta2.Module{{Name: "rho"}, {Name: "bomb"}} })

	mf := eventuallyManifest(t, "bounded-bomb", "Error", manifestState(shared.StateError))
	cond := meta.FindStatusCondition(mf.Status.Conditions, v1beta2.ConditionResources)
	require.NotNil(t, cond)
	assert.Equal(t, manifestctrl.ReasonRenderLimit, cond.Reason)
	// The child's heap bound stops it, or, where the race detector makes it
	// allocate slowly, the deadline does: either bound is named.
	bound := "memory"
	if !strings.Contains(mf.Status.LastOperation.Operation, `render limit "memory"`) {
		bound = "time"
	}
	assert.Contains(t, mf.Status.LastOperation.Operation, `render limit "`+bound+`"`, "the message names the bound")
	assert.Empty(t, mf.Status.Synced, "nothing of it is applied")
	require.Eventually(t, func() bool { return manifestEvent(t, "bounded-bomb", "Warning", `render limit "`+bound+`"`) },
		timeout, tick, "a Warning Event tells why")

	playModuleOperator(t, "bounded", "rho", "", false)
	eventuallyManifest(t, "bounded-rho", "Ready", manifestState(shared.StateReady))

	// The Manifest is retried every --requeue-error (1 s here); the render
	// is not: the same module version renders the same.
	require.Eventually(t, func() bool { return renderMetric(t, "lifecycle_manager_renders_total", "error") >= 3 },
		timeout, tick, "the bad Manifest is reconciled again")
	assert.InDelta(t, 1, renderMetric(t, "lifecycle_manager_render_limits_exceeded_total", bound), 0,
		"rendered once: the failure is remembered")

	peak := readStatus(t, "VmHWM")
	assert.Less(t, peak-baseline, int64(maxRenderGrowth), "the peak RSS grew by %d MiB", (peak-baseline)>>20)
}

// TestDeniedContentIsNotApplied: a module that binds cluster-admin is
// Error, naming the object and the rule, and nothing of it is applied.
func TestDeniedContentIsNotApplied(t *testing.T) {
	admin := "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: tau-admin}\n" +
		"roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}\n" +
		"subjects: [{kind: ServiceAccount, name: tau, namespace: kyma-system}]\n"
	publish(t, module{Name: "tau", Version: "1.0.0", Extra: []string{admin}})
	releaseMeta(t, "tau", map[string]string{"regular": "1.0.0"})
	newKyma(t, "denied", func(k *v1beta2.Kyma) { k.Spec.Modules = []v1beta2.Module{{Name: "tau"}} })

	mf := eventuallyManifest(t, "denied-tau", "Error", manifestState(shared.StateError))
	cond := meta.FindStatusCondition(mf.Status.Conditions, v1beta2.ConditionResources)
	require.NotNil(t, cond)
	assert.Equal(t, manifestctrl.ReasonContentDenied, cond.Reason)
	assert.Contains(t, cond.Message, "ClusterRoleBinding tau-admin is denied by rule rbac.authorization.k8s.io/ClusterRoleBinding:cluster-admin")
	assert.Empty(t, mf.Status.Synced)
	for _, obj := range [][4]string{
		{"rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "", "tau-admin"},
		{"apps/v1", "Deployment", "denied", "tau-operator"},
		{"apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "taus." + testGroup},
	} {
		assert.True(t, apierrors.IsNotFound(runtimeObject(t, obj[0], obj[1], obj[2], obj[3])), "%s %s is not applied", obj[1], obj[3])
	}
}

// manifestEvent reports whether an Event about the Manifest has the type
// and a note containing text.
func manifestEvent(t *testing.T, name, typ, text string) bool {
	t.Helper()
	var list eventsv1.EventList
	if err := kcp.Client.List(t.Context(), &list, client.InNamespace(kcpNamespace)); err != nil {
		return false
	}
	for _, e := range list.Items {
		if e.Regarding.Kind == v1beta2.ManifestKind && e.Regarding.Name == name && e.Type == typ && strings.Contains(e.Note, text) {
			return true
		}
	}
	return false
}

// renderMetric reads a render counter by its one label's value.
func renderMetric(t *testing.T, name, label string) float64 {
	t.Helper()
	families, err := metricsRegistry.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if hasLabelValue(m, label) {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

func hasLabelValue(m *dto.Metric, value string) bool {
	for _, l := range m.GetLabel() {
		if l.GetValue() == value {
			return true
		}
	}
	return false
}

// resetPeakRSS resets the process's peak RSS (VmHWM) to its current RSS
// and returns that.
func resetPeakRSS(t *testing.T) int64 {
	t.Helper()
	require.NoError(t, os.WriteFile("/proc/self/clear_refs", []byte("5"), 0o600))
	return readStatus(t, "VmRSS")
}

// readStatus reads a memory field of /proc/self/status, in bytes.
func readStatus(t *testing.T, field string) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/status")
	require.NoError(t, err)
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), ":")
		if !ok || name != field {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
		require.NoError(t, err)
		return kb << 10
	}
	require.FailNow(t, "no "+field+" in /proc/self/status")
	return 0
}

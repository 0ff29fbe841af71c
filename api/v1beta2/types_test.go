package v1beta2_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
)

func TestEffectiveChannel(t *testing.T) {
	tests := []struct {
		name          string
		kymaChannel   string
		moduleChannel string
		want          string
	}{
		{"module channel wins", "regular", "fast", "fast"},
		{"kyma channel is the fallback", "fast", "", "fast"},
		{"regular when neither is set", "", "", "regular"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k := &v1beta2.Kyma{Spec: v1beta2.KymaSpec{Channel: tc.kymaChannel}}
			assert.Equal(t, tc.want, k.EffectiveChannel(v1beta2.Module{Name: "m", Channel: tc.moduleChannel}))
		})
	}
}

func TestIsManaged(t *testing.T) {
	yes, no := true, false
	assert.True(t, v1beta2.Module{}.IsManaged(), "absent means managed")
	assert.True(t, v1beta2.Module{Managed: &yes}.IsManaged())
	assert.False(t, v1beta2.Module{Managed: &no}.IsManaged())
}

func TestLabelSwitches(t *testing.T) {
	k := &v1beta2.Kyma{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{
		shared.BetaLabel:               "True",
		shared.InternalLabel:           "false",
		shared.SkipReconciliationLabel: "yes",
		shared.RuntimeIDLabel:          "rt-1",
	}}}
	assert.True(t, k.IsBeta(), "label values are case-insensitive")
	assert.False(t, k.IsInternal())
	assert.False(t, k.SkipsReconciliation(), "only true switches a label on")
	assert.Equal(t, "rt-1", k.RuntimeID())
}

func TestVersionFor(t *testing.T) {
	m := &v1beta2.ModuleReleaseMeta{Spec: v1beta2.ModuleReleaseMetaSpec{Channels: []v1beta2.ChannelVersionAssignment{
		{Channel: "regular", Version: "1.0.0"}, {Channel: "fast", Version: "1.1.0"},
	}}}
	v, ok := m.VersionFor("fast")
	assert.True(t, ok)
	assert.Equal(t, "1.1.0", v)
	_, ok = m.VersionFor("experimental")
	assert.False(t, ok)
}

func TestWatcherManagerName(t *testing.T) {
	w := &v1beta2.Watcher{}
	w.Labels = map[string]string{shared.ManagedByLabel: "lifecycle-manager"}
	assert.Equal(t, "lifecycle-manager", w.ManagerName(), "the public API names the manager by label")
	w.Spec.Manager = "telemetry"
	assert.Equal(t, "telemetry", w.ManagerName())
}

package manifest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lifecycle-manager/api/shared"
)

func TestStripLabelsTakesOnlyTheOperatorsOwn(t *testing.T) {
	r := &Reconciler{AdoptFrom: []string{"declarative-v2"}}
	cases := []struct {
		name   string
		labels map[string]string
		want   map[string]string
		strips bool
	}{
		{"ours", map[string]string{shared.ManagedByLabel: shared.OperatorName, shared.ModuleNameLabel: "relic", shared.ManifestLabel: "uid", "team": "a"},
			map[string]string{"team": "a"}, true},
		{"the default CR has no module name", map[string]string{shared.ManagedByLabel: shared.OperatorName},
			map[string]string{}, true},
		{"adopted from the former manager", map[string]string{shared.ManagedByLabel: "declarative-v2"},
			map[string]string{}, true},
		{"another module's", map[string]string{shared.ManagedByLabel: shared.OperatorName, shared.ModuleNameLabel: "other"},
			map[string]string{shared.ManagedByLabel: shared.OperatorName, shared.ModuleNameLabel: "other"}, false},
		{"someone else's", map[string]string{shared.ManagedByLabel: "helm", shared.ModuleNameLabel: "relic"},
			map[string]string{shared.ManagedByLabel: "helm", shared.ModuleNameLabel: "relic"}, false},
		{"unlabelled", nil, nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Labels: c.labels}}
			assert.Equal(t, c.strips, r.stripLabels(obj, "relic"))
			assert.Equal(t, c.want, obj.GetLabels())
		})
	}
}

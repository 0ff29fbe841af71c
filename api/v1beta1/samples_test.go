package v1beta1_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/conversion"
	"sigs.k8s.io/yaml"

	"github.com/lifecycle-manager/api/v1beta1"
	"github.com/lifecycle-manager/api/v1beta2"
)

// TestSamplesConvert decodes each v1beta1 sample strictly (the types know
// every field the documentation uses) and converts it to v1beta2 and back.
func TestSamplesConvert(t *testing.T) {
	tests := []struct {
		file  string
		spoke conversion.Convertible
		hub   conversion.Hub
	}{
		{"kyma-v1beta1.yaml", &v1beta1.Kyma{}, &v1beta2.Kyma{}},
		{"moduletemplate-v1beta1.yaml", &v1beta1.ModuleTemplate{}, &v1beta2.ModuleTemplate{}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("..", "config", "samples", tc.file))
			require.NoError(t, err)
			require.NoError(t, yaml.UnmarshalStrict(raw, tc.spoke))
			assert.Equal(t, v1beta1.GroupVersion.String(), tc.spoke.GetObjectKind().GroupVersionKind().GroupVersion().String())
			require.NoError(t, tc.spoke.ConvertTo(tc.hub))
			assert.Contains(t, string(mustJSON(t, tc.hub)), v1beta1.V1beta1SpecAnnotation, "the v1beta1-only fields travel along")

			back := tc.spoke.DeepCopyObject().(conversion.Convertible)
			require.NoError(t, back.ConvertFrom(tc.hub))
			back.GetObjectKind().SetGroupVersionKind(tc.spoke.GetObjectKind().GroupVersionKind())
			assert.True(t, equality.Semantic.DeepEqual(tc.spoke, back), "lossless: %+v", back)
		})
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	raw, err := yaml.Marshal(v)
	require.NoError(t, err)
	return raw
}

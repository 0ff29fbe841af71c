package fleet

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/testenv"
	"github.com/lifecycle-manager/api/v1beta2"
)

// TestTheBoundWritesWithTheVerbAsked: with apply, the bound's objects and
// their statuses are stored by server-side apply (what the operator pays
// for), otherwise by create and update; the kubelet's status stays an
// update. The objects come back with what the server stored either way.
func TestTheBoundWritesWithTheVerbAsked(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	c := env.Client
	for _, tc := range []struct {
		name      string
		apply     bool
		operation metav1.ManagedFieldsOperationType
	}{
		{"create and update", false, metav1.ManagedFieldsOperationUpdate},
		{"server-side apply", true, metav1.ManagedFieldsOperationApply},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			w := boundWriter{apply: tc.apply}
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "bound-"}}
			require.NoError(t, c.Create(ctx, ns))

			mf := &v1beta2.Manifest{ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: ns.Name},
				Spec: v1beta2.ManifestSpec{Remote: true, Install: v1beta2.InstallInfo{Name: "raw-manifest",
					Source: runtime.RawExtension{Raw: []byte(`{"name":"x","repo":"example.com/x","ref":"sha256:00","type":"oci-ref"}`)}}}}
			require.NoError(t, w.create(ctx, c, mf))
			assert.NotEmpty(t, mf.UID, "the object is what the server stored")
			mf.Status.State = shared.StateReady
			require.NoError(t, w.status(ctx, c, mf, false))
			var stored v1beta2.Manifest
			require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(mf), &stored))
			assert.Equal(t, shared.StateReady, stored.Status.State)
			assert.Equal(t, []metav1.ManagedFieldsOperationType{tc.operation, tc.operation}, operations(stored.ManagedFields))

			cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"name": "c", "namespace": ns.Name}, "data": map[string]any{"k": "v"}}}
			require.NoError(t, w.create(ctx, c, cm))
			assert.NotEmpty(t, cm.GetUID())
			assert.Equal(t, []metav1.ManagedFieldsOperationType{tc.operation}, operations(cm.GetManagedFields()))
		})
	}
}

func operations(fields []metav1.ManagedFieldsEntry) []metav1.ManagedFieldsOperationType {
	var ops []metav1.ManagedFieldsOperationType
	for _, f := range fields {
		ops = append(ops, f.Operation)
	}
	return ops
}

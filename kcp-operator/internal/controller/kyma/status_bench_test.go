package kyma

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/resolve"
)

// readyKyma is a Kyma in steady state with n listed modules, each
// resolved and with a Ready Manifest, and the conditions of the other
// controllers reported: what a resync aggregates.
func readyKyma(r *Reconciler, n int) (*v1beta2.Kyma, []moduleResult) {
	kyma := &v1beta2.Kyma{ObjectMeta: metav1.ObjectMeta{Name: "kyma-0001", Namespace: "kcp-system", Generation: 3}}
	results := make([]moduleResult, 0, n)
	for i := range n {
		name := fmt.Sprintf("module-%02d", i)
		kyma.Spec.Modules = append(kyma.Spec.Modules, v1beta2.Module{Name: name})
		tmpl := &v1beta2.ModuleTemplate{
			ObjectMeta: metav1.ObjectMeta{Name: name + "-1.2.0", Namespace: kyma.Namespace, Generation: 1},
			Spec: v1beta2.ModuleTemplateSpec{Data: &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "operator.kyma-project.io/v1alpha1", "kind": "Default",
				"metadata": map[string]any{"name": "default", "namespace": "kyma-system"},
			}}},
		}
		mf := &v1beta2.Manifest{ObjectMeta: metav1.ObjectMeta{Name: ManifestName(kyma, name), Namespace: kyma.Namespace, Generation: 2}}
		mf.Status.State = shared.StateReady
		results = append(results, moduleResult{
			listed: kyma.Spec.Modules[i],
			resolved: &resolve.Module{
				Name: name, ModuleName: name, Channel: "regular", Version: "1.2.0",
				FQDN: "kyma-project.io/module/" + name, Template: tmpl,
			},
			manifest: mf,
		})
	}
	for _, typ := range r.Required {
		kyma.Status.Conditions = append(kyma.Status.Conditions, metav1.Condition{
			Type: typ, Status: metav1.ConditionTrue, Reason: "Ready", ObservedGeneration: 3, LastTransitionTime: now(),
		})
	}
	kyma.Status = r.desiredStatus(kyma, results, kyma.Status.Conditions)
	return kyma, results
}

// BenchmarkStatusAggregation computes a Kyma's status (state, modules[],
// conditions, last operation) from its module results and Manifests, and
// compares it with the current status to decide whether to write: the
// whole of the per-reconcile status work short of the API call. The Kyma
// is in steady state, so the comparison must find nothing to write.
func BenchmarkStatusAggregation(b *testing.B) {
	r := &Reconciler{Required: []string{v1beta2.ConditionModuleCatalog, v1beta2.ConditionSKRWebhook}}
	for _, n := range []int{5, 50} {
		b.Run(fmt.Sprintf("modules=%d", n), func(b *testing.B) {
			kyma, results := readyKyma(r, n)
			status := r.desiredStatus(kyma, results, kyma.Status.Conditions)
			require.Equal(b, shared.StateReady, status.State)
			require.Len(b, status.Modules, n)
			require.Len(b, status.Conditions, 4)
			require.True(b, sameStatus(kyma.Status, status), "a steady state causes no write")
			b.ReportAllocs()
			for b.Loop() {
				status := r.desiredStatus(kyma, results, kyma.Status.Conditions)
				if !sameStatus(kyma.Status, status) {
					b.Fatal("the status changed in steady state")
				}
			}
		})
	}
}

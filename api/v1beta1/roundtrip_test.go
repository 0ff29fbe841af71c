package v1beta1_test

import (
	"fmt"
	"math/rand"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/dump"
	"sigs.k8s.io/controller-runtime/pkg/conversion"
	"sigs.k8s.io/randfill"

	"github.com/lifecycle-manager/api/v1beta1"
	"github.com/lifecycle-manager/api/v1beta2"
)

// rounds per kind and direction; every field of both versions is filled at
// random, so a field added to either version without a way through the
// conversion fails here.
const rounds = 300

// filler fills API objects with random content that JSON can carry:
// embedded objects and raw extensions hold JSON, and module names are
// unique (they are the key of spec.modules).
func filler(seed int64) *randfill.Filler {
	return randfill.NewWithSeed(seed).NilChance(0.2).NumElements(0, 3).Funcs(
		func(u *unstructured.Unstructured, c randfill.Continue) {
			u.Object = map[string]any{"apiVersion": "example.com/v1", "kind": c.String(8),
				"spec": map[string]any{"n": c.Int63(), "s": c.String(8), "on": c.Bool(), "l": []any{c.String(4)}}}
		},
		func(r *runtime.RawExtension, c randfill.Continue) {
			r.Raw = fmt.Appendf(nil, `{"name":%q,"n":%d}`, c.String(8), c.Intn(1000))
		},
		func(s *v1beta2.KymaSpec, c randfill.Continue) {
			c.FillNoCustom(s)
			for i := range s.Modules {
				s.Modules[i].Name = fmt.Sprintf("module-%d", i)
			}
		},
		func(s *v1beta1.KymaSpec, c randfill.Continue) {
			c.FillNoCustom(s)
			for i := range s.Modules {
				s.Modules[i].Name = fmt.Sprintf("module-%d", i)
			}
		},
	)
}

// hubDefaults is what the API server defaults again after a conversion
// left it out: managed: true (see kymaExtra).
func hubDefaults(obj conversion.Hub) {
	if k, ok := obj.(*v1beta2.Kyma); ok {
		for i := range k.Spec.Modules {
			if k.Spec.Modules[i].IsManaged() {
				k.Spec.Modules[i].Managed = nil
			}
		}
	}
}

func TestRoundTripFromHub(t *testing.T) {
	kinds := []struct {
		hub   func() conversion.Hub
		spoke func() conversion.Convertible
	}{
		{func() conversion.Hub { return &v1beta2.Kyma{} }, func() conversion.Convertible { return &v1beta1.Kyma{} }},
		{func() conversion.Hub { return &v1beta2.ModuleTemplate{} }, func() conversion.Convertible { return &v1beta1.ModuleTemplate{} }},
		{func() conversion.Hub { return &v1beta2.Manifest{} }, func() conversion.Convertible { return &v1beta1.Manifest{} }},
	}
	for _, kind := range kinds {
		t.Run(fmt.Sprintf("%T", kind.hub()), func(t *testing.T) {
			for i := range rounds {
				seed := rand.Int63()
				in := kind.hub()
				filler(seed).Fill(in)
				in.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{}) // set by the webhook, not converted
				spoke, out := kind.spoke(), kind.hub()
				if err := spoke.ConvertFrom(in); err != nil {
					t.Fatalf("round %d (seed %d): down: %v", i, seed, err)
				}
				if err := spoke.ConvertTo(out); err != nil {
					t.Fatalf("round %d (seed %d): up: %v", i, seed, err)
				}
				hubDefaults(in)
				if !equality.Semantic.DeepEqual(in, out) {
					t.Fatalf("round %d (seed %d): v1beta2 → v1beta1 → v1beta2 lost something:\n%s", i, seed, diff(in, out))
				}
			}
		})
	}
}

func TestRoundTripFromV1beta1(t *testing.T) {
	kinds := []struct {
		hub   func() conversion.Hub
		spoke func() conversion.Convertible
	}{
		{func() conversion.Hub { return &v1beta2.Kyma{} }, func() conversion.Convertible { return &v1beta1.Kyma{} }},
		{func() conversion.Hub { return &v1beta2.ModuleTemplate{} }, func() conversion.Convertible { return &v1beta1.ModuleTemplate{} }},
		{func() conversion.Hub { return &v1beta2.Manifest{} }, func() conversion.Convertible { return &v1beta1.Manifest{} }},
	}
	for _, kind := range kinds {
		t.Run(fmt.Sprintf("%T", kind.spoke()), func(t *testing.T) {
			for i := range rounds {
				seed := rand.Int63()
				in := kind.spoke()
				filler(seed).Fill(in)
				in.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
				hub, out := kind.hub(), kind.spoke()
				if err := in.ConvertTo(hub); err != nil {
					t.Fatalf("round %d (seed %d): up: %v", i, seed, err)
				}
				if err := out.ConvertFrom(hub); err != nil {
					t.Fatalf("round %d (seed %d): down: %v", i, seed, err)
				}
				if !equality.Semantic.DeepEqual(in, out) {
					t.Fatalf("round %d (seed %d): v1beta1 → v1beta2 → v1beta1 lost something:\n%s", i, seed, diff(in, out))
				}
			}
		})
	}
}

func diff(a, b any) string {
	return "want: " + dump.Pretty(a) + "\ngot:  " + dump.Pretty(b)
}

package fleet

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/e2e/scale/report"
)

// readsPerRuntime turns the runtime requests the API servers answered
// while the operator converged into GETs per runtime and per resource,
// for the resources the model holds: what a bare client repeats to price
// the operator's reads.
func readsPerRuntime(served map[string]float64, kymas int, m *runtimeModel) map[string]int {
	out := map[string]int{}
	for key, n := range served {
		resource, ok := strings.CutPrefix(key, "GET ")
		if !ok || len(m.objectsOf(resource)) == 0 {
			continue
		}
		if per := int(math.Round(n / float64(kymas))); per > 0 {
			out[resource] = per
		}
	}
	return out
}

// objectsOf returns the model's objects of a resource (plural, lower case).
func (m *runtimeModel) objectsOf(resource string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range m.objects {
		if resourceOf(o.GroupVersionKind()) == resource {
			out = append(out, o)
		}
	}
	return out
}

func resourceOf(gvk schema.GroupVersionKind) string {
	kind := strings.ToLower(gvk.Kind)
	if strings.HasSuffix(kind, "y") {
		return strings.TrimSuffix(kind, "y") + "ies"
	}
	return kind + "s"
}

// wholeReads are the resources the operator reads whole; of the others it
// reads only the metadata.
var wholeReads = []string{"deployments", "kymas"}

// measureReads makes, in the full bound's copy of every runtime, the reads
// per runtime that reads gives, cycling through the copies of each
// resource, and returns what they took and cost.
func (f *Fleet) measureReads(ctx context.Context, workers int, m *runtimeModel, reads map[string]int) (*report.Reads, error) {
	before, err := f.readServed(ctx)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	err = forEach(ctx, f.opts.Kymas, workers, func(ctx context.Context, i int) error {
		c, ns := f.server(i), boundRuntimeNamespace(i)
		for resource, n := range reads {
			objs := m.objectsOf(resource)
			for j := range n {
				if err := readCopy(ctx, c, objs[j%len(objs)], ns, slices.Contains(wholeReads, resource)); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("the operator's reads: %w", err)
	}
	r := &report.Reads{PerRuntime: reads, Seconds: time.Since(start).Seconds()}
	for _, n := range reads {
		r.Requests += n * f.opts.Kymas
	}
	after, err := f.readServed(ctx)
	if err != nil {
		return nil, err
	}
	r.Served = servedSince(before, after)
	return r, nil
}

func readCopy(ctx context.Context, c client.Client, model *unstructured.Unstructured, ns string, whole bool) error {
	key := client.ObjectKey{Namespace: ns, Name: model.GetName()}
	var obj client.Object
	if whole {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(model.GroupVersionKind())
		obj = u
	} else {
		pm := &metav1.PartialObjectMetadata{}
		pm.SetGroupVersionKind(model.GroupVersionKind())
		obj = pm
	}
	if err := c.Get(ctx, key, obj); err != nil {
		return fmt.Errorf("reading %s %s: %w", model.GetKind(), key, err)
	}
	return nil
}

package render

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/lifecycle-manager/api/shared"
)

// transformer applies the operator's changes to every rendered object.
type transformer struct {
	module    string
	namespace string
	images    *imageRewriter
	pull      string // image pull Secret of Deployments and StatefulSets
	scope     ScopeFunc
	defined   map[schema.GroupKind]bool // kinds defined by CRDs of this render → namespaced
	asked     map[schema.GroupVersionKind]bool
}

func newTransformer(req *Request, scope ScopeFunc, parsed []parsedObject) (*transformer, error) {
	images, err := newImageRewriter(req.LocalizedImages)
	if err != nil {
		return nil, err
	}
	t := &transformer{
		module: req.Module, namespace: req.Namespace, images: images, pull: req.PullSecret, scope: scope,
		defined: map[schema.GroupKind]bool{}, asked: map[schema.GroupVersionKind]bool{},
	}
	for _, p := range parsed {
		if !IsCRD(p.obj) {
			continue
		}
		k, err := definedKind(p.obj)
		if err != nil {
			return nil, p.origin.fail(p.obj, err)
		}
		t.defined[k.GroupKind] = k.Namespaced
	}
	return t, nil
}

// apply labels the object, settles its namespace, rewrites its images and
// adds the image pull Secret.
func (t *transformer) apply(p parsedObject) error {
	obj := p.obj
	labels := obj.GetLabels()
	if labels == nil {
		labels = make(map[string]string, 2)
	}
	labels[shared.ManagedByLabel] = shared.OperatorName
	labels[shared.ModuleNameLabel] = t.module
	obj.SetLabels(labels)

	namespaced, err := t.namespaced(obj.GroupVersionKind())
	if err != nil {
		return p.origin.fail(obj, err)
	}
	switch {
	case namespaced && obj.GetNamespace() == "":
		obj.SetNamespace(t.namespace)
	case !namespaced && obj.GetNamespace() != "":
		// Charts often template a namespace onto everything; for a
		// cluster-scoped object it only confuses apply and pruning.
		obj.SetNamespace("")
	}
	t.images.rewriteObject(obj)
	addPullSecret(obj, t.pull)
	return nil
}

func (t *transformer) namespaced(gvk schema.GroupVersionKind) (bool, error) {
	if ns, ok := t.defined[gvk.GroupKind()]; ok {
		return ns, nil
	}
	if ns, ok := t.asked[gvk]; ok {
		return ns, nil
	}
	ns, err := t.scope(gvk)
	if err != nil {
		return false, fmt.Errorf("scope of %s: %w", gvk, err)
	}
	t.asked[gvk] = ns
	return ns, nil
}

// objectID identifies an object for duplicate detection.
type objectID struct {
	gk        schema.GroupKind
	namespace string
	name      string
}

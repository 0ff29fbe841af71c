package removal

import (
	"context"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
)

// MaxNamed bounds the custom resources UserCRs names.
const MaxNamed = 5

// UserCRs names up to MaxNamed custom resources of the CRD other than own
// (the module's default CR, may be nil). A CRD that does not exist, or whose
// kind the API server no longer serves, has none.
func UserCRs(ctx context.Context, c client.Client, crdName string, own *unstructured.Unstructured) ([]string, error) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(ctx, client.ObjectKey{Name: crdName}, crd); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading CRD %s: %w", crdName, err)
	}
	version := ""
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			version = v.Name
		}
	}
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(schema.GroupVersionKind{Group: crd.Spec.Group, Version: version, Kind: crd.Spec.Names.ListKind})
	// One more than named: the module's own CR may be among them.
	if err := c.List(ctx, list, client.Limit(MaxNamed+1)); err != nil {
		if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("listing %s: %w", crd.Spec.Names.Plural, err)
	}
	var names []string
	for i := range list.Items {
		item := &list.Items[i]
		if isOwn(item, crd.Spec.Group, crd.Spec.Names.Kind, own) || len(names) == MaxNamed {
			continue
		}
		if item.Namespace == "" {
			names = append(names, crd.Spec.Names.Kind+" "+item.Name)
		} else {
			names = append(names, crd.Spec.Names.Kind+" "+item.Namespace+"/"+item.Name)
		}
	}
	return names, nil
}

func isOwn(item *metav1.PartialObjectMetadata, group, kind string, own *unstructured.Unstructured) bool {
	if own == nil {
		return false
	}
	gvk := own.GroupVersionKind()
	return gvk.Group == group && gvk.Kind == kind && own.GetNamespace() == item.Namespace && own.GetName() == item.Name
}

// OwnCR is the module's default CR as the operator created it in the runtime
// (a namespaced CR without namespace goes to the sync namespace), or nil when
// the module has none or its customResourcePolicy is Ignore: then the user
// creates and owns it, and it is user data like any other CR; nil too when
// its group is not that of a CRD the module applied (see appliedCRDGroup).
func OwnCR(mf *v1beta2.Manifest, c client.Client, syncNamespace string) *unstructured.Unstructured {
	if mf.Spec.Resource == nil || mf.Spec.CustomResourcePolicy == v1beta2.CustomResourcePolicyIgnore || !appliedCRDGroup(mf) {
		return nil
	}
	cr := mf.Spec.Resource.DeepCopy()
	if cr.GetNamespace() == "" {
		gvk := cr.GroupVersionKind()
		if m, err := c.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version); err == nil && m.Scope.Name() == meta.RESTScopeNameNamespace {
			cr.SetNamespace(syncNamespace)
		}
	}
	return cr
}

// ModuleOf is what a Manifest records of its module in the runtime c.
func ModuleOf(mf *v1beta2.Manifest, c client.Client, syncNamespace string) Module {
	return Module{SyncNamespace: syncNamespace, Created: mf.Status.Created, OwnCR: OwnCR(mf, c, syncNamespace), Name: ModuleName(mf)}
}

// ModuleName is the module a Manifest installs, as its render labels the
// module's objects: the module-name label, else the Manifest's name.
func ModuleName(mf *v1beta2.Manifest) string {
	if name := mf.Labels[shared.ModuleNameLabel]; name != "" {
		return name
	}
	return mf.Name
}

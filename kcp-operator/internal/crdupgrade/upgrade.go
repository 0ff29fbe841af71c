package crdupgrade

import (
	"context"
	"fmt"
	"slices"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// FieldOwner is the field manager of the CRDs Upgrade applies.
const FieldOwner = "kcp-operator"

// Result says what Upgrade did to one CRD.
type Result struct {
	Name string
	// Migrated is how many objects were rewritten into the storage version;
	// Dropped the versions removed from storedVersions.
	Migrated int
	Dropped  []string
}

// Upgrade applies each of crds with c, migrating stored objects of versions
// other than its storage version first (see the package documentation).
func Upgrade(ctx context.Context, c client.Client, crds []*apiextensionsv1.CustomResourceDefinition, log logr.Logger) ([]Result, error) {
	results := make([]Result, 0, len(crds))
	for _, want := range crds {
		res, err := upgradeOne(ctx, c, want)
		if err != nil {
			return results, fmt.Errorf("CRD %s: %w", want.Name, err)
		}
		log.Info("CRD applied", "crd", res.Name, "migratedObjects", res.Migrated, "droppedStoredVersions", res.Dropped)
		results = append(results, res)
	}
	return results, nil
}

func upgradeOne(ctx context.Context, c client.Client, want *apiextensionsv1.CustomResourceDefinition) (Result, error) {
	res := Result{Name: want.Name}
	have := &apiextensionsv1.CustomResourceDefinition{}
	err := c.Get(ctx, client.ObjectKey{Name: want.Name}, have)
	switch {
	case apierrors.IsNotFound(err):
		return res, apply(ctx, c, want)
	case err != nil:
		return res, fmt.Errorf("reading the installed CRD: %w", err)
	}
	// Every stored version but our storage version is stale, also one we
	// still serve (v1beta1, through the conversion webhook): reading such
	// objects would need the webhook, which the operator must never depend
	// on for its own (v1beta2) reads, and which does not run during the hook.
	storage := storageVersion(want)
	stale := slices.DeleteFunc(slices.Clone(have.Status.StoredVersions), func(v string) bool { return v == storage })
	if len(stale) > 0 {
		if err := storeAs(ctx, c, have, storage); err != nil {
			return res, err
		}
		if res.Migrated, err = rewriteAll(ctx, c, have, storage); err != nil {
			return res, err
		}
		if err := keepStored(ctx, c, have, storage); err != nil {
			return res, err
		}
		res.Dropped = stale
	}
	if err := dropWebhook(ctx, c, want); err != nil {
		return res, err
	}
	return res, apply(ctx, c, want)
}

// dropWebhook sets the installed CRD's conversion to None when want has no
// conversion webhook but the installed one has (the webhook was turned
// off). Applying want alone would remove the fields this hook applied
// before, but not the caBundle the operator wrote: the API server refuses
// a webhook client config without the Webhook strategy.
func dropWebhook(ctx context.Context, c client.Client, want *apiextensionsv1.CustomResourceDefinition) error {
	if want.Spec.Conversion != nil && want.Spec.Conversion.Strategy == apiextensionsv1.WebhookConverter {
		return nil
	}
	have := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(ctx, client.ObjectKey{Name: want.Name}, have); err != nil {
		return fmt.Errorf("rereading the CRD: %w", err)
	}
	if have.Spec.Conversion == nil || have.Spec.Conversion.Strategy != apiextensionsv1.WebhookConverter {
		return nil
	}
	have.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}
	if err := c.Update(ctx, have); err != nil {
		return fmt.Errorf("turning the conversion webhook off: %w", err)
	}
	return nil
}

// storeAs makes version the installed CRD's storage version, so that
// rewritten objects land in it. The installed CRD must serve it already:
// a CRD that does not is no predecessor of ours.
func storeAs(ctx context.Context, c client.Client, crd *apiextensionsv1.CustomResourceDefinition, version string) error {
	i := slices.IndexFunc(crd.Spec.Versions, func(v apiextensionsv1.CustomResourceDefinitionVersion) bool { return v.Name == version })
	if i < 0 || !crd.Spec.Versions[i].Served {
		return fmt.Errorf("the installed CRD does not serve %s, so its objects cannot be moved to it", version)
	}
	if crd.Spec.Versions[i].Storage {
		return nil
	}
	for j := range crd.Spec.Versions {
		crd.Spec.Versions[j].Storage = j == i
	}
	if err := c.Update(ctx, crd); err != nil {
		return fmt.Errorf("making %s the storage version: %w", version, err)
	}
	return nil
}

// rewriteAll writes every object back unchanged: the API server stores an
// update in the storage version even when nothing else changed, because
// the encoded object differs from what etcd holds.
func rewriteAll(ctx context.Context, c client.Client, crd *apiextensionsv1.CustomResourceDefinition, version string) (int, error) {
	gvk := schema.GroupVersionKind{Group: crd.Spec.Group, Version: version, Kind: crd.Spec.Names.ListKind}
	migrated, next := 0, ""
	for {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk)
		if err := c.List(ctx, list, client.Limit(500), client.Continue(next)); err != nil {
			return migrated, fmt.Errorf("listing %s: %w", gvk.Kind, err)
		}
		for i := range list.Items {
			if err := rewrite(ctx, c, &list.Items[i]); err != nil {
				return migrated, err
			}
			migrated++
		}
		if next = list.GetContinue(); next == "" {
			return migrated, nil
		}
	}
}

func rewrite(ctx context.Context, c client.Client, obj *unstructured.Unstructured) error {
	for {
		err := c.Update(ctx, obj)
		switch {
		case err == nil, apierrors.IsNotFound(err):
			return nil
		case !apierrors.IsConflict(err):
			return fmt.Errorf("rewriting %s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
		}
		// Someone wrote it meanwhile, which stores it in the new version too;
		// read it again to be sure.
		key := types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}
		if err := c.Get(ctx, key, obj); err != nil {
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("rereading %s %s: %w", obj.GetKind(), key, err)
		}
	}
}

// keepStored leaves only version in status.storedVersions: every object is
// stored in it now.
func keepStored(ctx context.Context, c client.Client, crd *apiextensionsv1.CustomResourceDefinition, version string) error {
	if err := c.Get(ctx, client.ObjectKeyFromObject(crd), crd); err != nil {
		return fmt.Errorf("rereading the CRD: %w", err)
	}
	crd.Status.StoredVersions = []string{version}
	if err := c.Status().Update(ctx, crd); err != nil {
		return fmt.Errorf("setting storedVersions to [%s]: %w", version, err)
	}
	return nil
}

func apply(ctx context.Context, c client.Client, want *apiextensionsv1.CustomResourceDefinition) error {
	obj := want.DeepCopy()
	obj.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	obj.Status = apiextensionsv1.CustomResourceDefinitionStatus{}
	u, err := toUnstructured(obj)
	if err != nil {
		return err
	}
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
		return fmt.Errorf("applying: %w", err)
	}
	return nil
}

func storageVersion(crd *apiextensionsv1.CustomResourceDefinition) string {
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			return v.Name
		}
	}
	return ""
}

func toUnstructured(obj runtime.Object) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("converting %T: %w", obj, err)
	}
	u := &unstructured.Unstructured{Object: m}
	unstructured.RemoveNestedField(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	return u, nil
}

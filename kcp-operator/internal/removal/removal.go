package removal

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
)

// Rules are what the operator may delete.
type Rules struct {
	// Protected namespaces are never deleted, whoever created them.
	Protected []string
	// Adopt are managed-by values whose objects count as the module's
	// (the public lifecycle manager's), beside this operator's.
	Adopt []string
}

// Module is what the operator knows of one module in one runtime.
type Module struct {
	// SyncNamespace is the runtime-side namespace of the Kyma: protected.
	SyncNamespace string
	// Created lists the objects the operator created, with their UIDs.
	Created []v1beta2.CreatedResource
	// OwnCR is the module's default CR when the operator created it; nil
	// when there is none or the user owns it (see OwnCR).
	OwnCR *unstructured.Unstructured
	// Name is the module's name as its objects carry it in the
	// module-name label: only objects that carry it are deleted.
	Name string
}

// Kept is a resource that Delete left in place, and why.
type Kept struct {
	shared.Resource
	Reason string
	// Pending: the module still holds the resource and deletes it once the
	// reason is gone (a CRD whose CRs remain). Otherwise the module lets go
	// of it (a Namespace it did not create).
	Pending bool
}

func (k Kept) String() string { return DescribeResource(k.Resource) + " (" + k.Reason + ")" }

// Delete deletes the resources the rules allow — CRDs and Namespaces last —
// and returns the ones it kept. It goes on past failures and returns them
// joined.
func (r Rules) Delete(ctx context.Context, c client.Client, m Module, resources []shared.Resource) ([]Kept, error) {
	ordered := slices.Clone(resources)
	slices.SortStableFunc(ordered, func(a, b shared.Resource) int { return rank(a) - rank(b) })
	var (
		kept []Kept
		errs []error
	)
	for _, res := range ordered {
		k, err := r.deleteOne(ctx, c, m, res)
		if err != nil {
			errs = append(errs, fmt.Errorf("deleting %s: %w", DescribeResource(res), err))
		}
		if k != nil {
			kept = append(kept, *k)
		}
	}
	return kept, errors.Join(errs...)
}

func (r Rules) deleteOne(ctx context.Context, c client.Client, m Module, res shared.Resource) (*Kept, error) {
	if IsNamespace(res) {
		return r.deleteNamespace(ctx, c, m, res)
	}
	current, err := read(ctx, c, res)
	if current == nil || err != nil {
		return nil, err
	}
	if !r.IsModules(current, m.Name) {
		return &Kept{Resource: res, Reason: "it does not carry the module's labels"}, nil
	}
	uid := current.GetUID()
	if IsCRD(res) {
		return deleteCRD(ctx, c, m, res, uid)
	}
	return nil, deleteObject(ctx, c, res, &uid)
}

// IsModules reports whether obj carries the labels of the module: the
// managed-by label of this operator (or of one it adopts from) and no
// module-name label of another module. Anything else is someone's data —
// a user's, another module's, or an object the module found and refused
// — which no record or sweep may make the module delete.
func (r Rules) IsModules(obj metav1.Object, module string) bool {
	labels := obj.GetLabels()
	by, ok := labels[shared.ManagedByLabel]
	if !ok || (by != shared.OperatorName && !slices.Contains(r.Adopt, by)) {
		return false
	}
	m, ok := labels[shared.ModuleNameLabel]
	return !ok || m == module
}

// read returns the metadata of the object res names, nil when it is gone.
func read(ctx context.Context, c client.Client, res shared.Resource) (*metav1.PartialObjectMetadata, error) {
	current := &metav1.PartialObjectMetadata{}
	current.SetGroupVersionKind(schema.GroupVersionKind{Group: res.Group, Version: res.Version, Kind: res.Kind})
	err := c.Get(ctx, client.ObjectKey{Namespace: res.Namespace, Name: res.Name}, current)
	switch {
	case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading it before the deletion: %w", err)
	}
	return current, nil
}

func (r Rules) deleteNamespace(ctx context.Context, c client.Client, m Module, res shared.Resource) (*Kept, error) {
	if r.IsProtected(res.Name, m.SyncNamespace) {
		return &Kept{Resource: res, Reason: "a protected namespace"}, nil
	}
	uid, ok := createdUID(m.Created, res)
	if !ok {
		return &Kept{Resource: res, Reason: "the module did not create it"}, nil
	}
	err := deleteObject(ctx, c, res, &uid)
	if apierrors.IsConflict(err) {
		// The UID precondition failed: the namespace was deleted and made
		// again by someone else since the module created it.
		return &Kept{Resource: res, Reason: "not the namespace the module created"}, nil
	}
	return nil, err
}

func deleteCRD(ctx context.Context, c client.Client, m Module, res shared.Resource, uid types.UID) (*Kept, error) {
	crs, err := UserCRs(ctx, c, res.Name, m.OwnCR)
	if err != nil {
		return nil, err
	}
	if len(crs) > 0 {
		return &Kept{Resource: res, Pending: true, Reason: "custom resources remain: " + strings.Join(crs, ", ")}, nil
	}
	return nil, deleteObject(ctx, c, res, &uid)
}

// IsProtected reports whether a namespace is never deleted: listed, or the
// runtime's sync namespace.
func (r Rules) IsProtected(namespace, syncNamespace string) bool {
	return namespace == syncNamespace || slices.Contains(r.Protected, namespace)
}

func createdUID(created []v1beta2.CreatedResource, res shared.Resource) (types.UID, bool) {
	for _, c := range created {
		if Key(c.Resource) == Key(res) && c.UID != "" {
			return c.UID, true
		}
	}
	return "", false
}

// deleteObject deletes in the background; with uid, only the object of that UID.
func deleteObject(ctx context.Context, c client.Client, res shared.Resource, uid *types.UID) error {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.GroupVersionKind{Group: res.Group, Version: res.Version, Kind: res.Kind})
	u.SetNamespace(res.Namespace)
	u.SetName(res.Name)
	opts := []client.DeleteOption{client.PropagationPolicy(metav1.DeletePropagationBackground)}
	if uid != nil {
		opts = append(opts, client.Preconditions{UID: uid})
	}
	err := c.Delete(ctx, u, opts...)
	if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
		return nil
	}
	if uid != nil && !IsNamespace(res) && apierrors.IsConflict(err) {
		return nil // deleted and made again since it was read: not the object checked
	}
	return err
}

// rank orders deletion: CRDs last, so that their CRs' operators can still
// finish; Namespaces before them, after what they hold.
func rank(r shared.Resource) int {
	switch {
	case IsCRD(r):
		return 2
	case IsNamespace(r):
		return 1
	default:
		return 0
	}
}

// IsCRD reports whether r is a CustomResourceDefinition.
func IsCRD(r shared.Resource) bool {
	return r.Group == "apiextensions.k8s.io" && r.Kind == "CustomResourceDefinition"
}

// IsNamespace reports whether r is a Namespace.
func IsNamespace(r shared.Resource) bool { return r.Group == "" && r.Kind == "Namespace" }

// Key identifies an object whatever version it was applied in.
func Key(r shared.Resource) string { return r.Group + "/" + r.Kind + "/" + r.Namespace + "/" + r.Name }

// DescribeResource names r as "Kind namespace/name" or "Kind name".
func DescribeResource(r shared.Resource) string {
	if r.Namespace == "" {
		return r.Kind + " " + r.Name
	}
	return r.Kind + " " + r.Namespace + "/" + r.Name
}

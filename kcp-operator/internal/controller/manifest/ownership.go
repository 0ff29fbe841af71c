package manifest

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/kcp-operator/internal/remote"
	"github.com/lifecycle-manager/kcp-operator/internal/runtimewrite"
)

// foreignOwner names who else holds an existing object that a module
// renders, or returns "" when the module may apply it: when the object is
// this module's (managed-by lifecycle-manager and the module-name label of
// this module, as the render labels every module object) or nobody's (no
// labels of an owner, no field manager but the operator's). Anything else —
// another managed-by value, another module, the operator's own runtime
// objects (managed-by without a module name), a field manager such as
// kubectl, Helm or Argo CD that created or edited it — is someone's data,
// which the module must neither take over nor, later, delete. Field
// managers that wrote only a subresource (status) own no content. adopt
// lists managed-by values and field managers that count as the module's
// (Reconciler.AdoptFrom: those of the public lifecycle manager, which the
// fleet migrates from).
func foreignOwner(current metav1.Object, module string, adopt []string) string {
	labels := current.GetLabels()
	switch by := labels[shared.ManagedByLabel]; {
	case by == "":
	case slices.Contains(adopt, by):
		return ""
	case by == shared.OperatorName:
		m, ok := labels[shared.ModuleNameLabel]
		switch {
		case ok && m == module:
			return ""
		case ok:
			return fmt.Sprintf("module %s (label %s=%s)", m, shared.ModuleNameLabel, m)
		default:
			return fmt.Sprintf("the lifecycle manager's runtime objects (label %s=%s without %s)", shared.ManagedByLabel, by, shared.ModuleNameLabel)
		}
	default:
		return fmt.Sprintf("label %s=%s", shared.ManagedByLabel, by)
	}
	for _, e := range current.GetManagedFields() {
		if e.Manager != runtimewrite.FieldOwner && e.Subresource == "" && !slices.Contains(adopt, e.Manager) {
			return "field manager " + e.Manager
		}
	}
	return ""
}

// holder is who else holds an object the module renders.
type holder struct {
	// owner names the holder; "" when the module may apply the object.
	owner string
	// leaving: the object is being deleted, so the module gets it soon.
	leaving bool
	// exists: the runtime has the object.
	exists bool
	// manifest is the object's ManifestLabel: the Manifest that placed it.
	manifest string
}

// ownerOf reads the object o names in the runtime and returns its foreign
// holder; an object that does not exist yet has none. cached lets the API
// server's cache answer.
func ownerOf(ctx context.Context, rt *remote.Runtime, o *unstructured.Unstructured, module string, adopt []string, cached bool) (holder, error) {
	current := &metav1.PartialObjectMetadata{}
	current.SetGroupVersionKind(o.GroupVersionKind())
	var opts []client.GetOption
	if cached {
		opts = append(opts, remote.FromServerCache())
	}
	err := rt.Get(ctx, client.ObjectKeyFromObject(o), current, opts...)
	switch {
	case apierrors.IsNotFound(err):
		return holder{}, nil
	case err != nil:
		return holder{}, fmt.Errorf("reading %s before applying it: %w", describe(o), err)
	}
	return holder{owner: foreignOwner(current, module, adopt), leaving: !current.DeletionTimestamp.IsZero(), exists: true,
		manifest: current.GetLabels()[shared.ManifestLabel]}, nil
}

// labelOwner sets obj's ManifestLabel to the Manifest that placed it: the
// one its stored object names, else manifest. Keeping a stored value makes
// an object two Manifests render (a cluster-scoped object of one module in
// a runtime several Kymas share) no drift of either.
func labelOwner(obj *unstructured.Unstructured, manifest types.UID, stored string) {
	value := stored
	if value == "" {
		value = string(manifest)
	}
	if value == "" {
		return
	}
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[shared.ManifestLabel] = value
	obj.SetLabels(labels)
}

// CreatedByAnnotation on a Namespace names, by UID, the Manifest whose
// apply created it. It is set in the create itself, so it is as free of
// races as the create: deletion trusts it where status.created lost the
// record (an apply that ended before its status was written).
const CreatedByAnnotation = shared.OperatorGroup + "/created-by-manifest"

// namespaceCreator is the field manager of a Namespace's create. It is not
// the operator's apply manager, whose created fields move into its apply
// (runtimewrite.ApplyOwned) and would be dropped by the next apply of the
// rendered Namespace, which has no such annotation: so it keeps the
// annotation for as long as the Namespace lives.
const namespaceCreator = runtimewrite.FieldOwner + "-namespace-create"

// createNamespace creates the namespace o names unless it exists, and
// returns the UID of the one it created: a create that succeeds is the
// proof, free of races, that the module made the namespace. The apply that
// follows sets its content.
func createNamespace(ctx context.Context, rt *remote.Runtime, o *unstructured.Unstructured, manifest types.UID) (types.UID, error) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: o.GetName(),
		Labels: map[string]string{shared.ManifestLabel: string(manifest)}, Annotations: map[string]string{CreatedByAnnotation: string(manifest)}}}
	err := rt.Create(ctx, ns, client.FieldOwner(namespaceCreator))
	switch {
	case apierrors.IsAlreadyExists(err):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("creating Namespace %s: %w", o.GetName(), err)
	}
	return ns.UID, nil
}

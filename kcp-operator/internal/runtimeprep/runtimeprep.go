package runtimeprep

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/config/crd"
	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/remote"
	"github.com/lifecycle-manager/kcp-operator/internal/runtimewrite"
)

// CRDKinds are the CRDs every runtime gets.
var CRDKinds = []string{v1beta2.KymaKind, v1beta2.ModuleTemplateKind, v1beta2.ModuleReleaseMetaKind}

// crdEstablishTimeout bounds the wait for a new CRD before its first object.
const crdEstablishTimeout = 30 * time.Second

// Ensure installs the CRDs and creates the runtime namespace.
func Ensure(ctx context.Context, rt *remote.Runtime) error {
	if err := InstallCRDs(ctx, rt); err != nil {
		return err
	}
	return ensureNamespace(ctx, rt)
}

// InstallCRDs applies the runtime CRDs where they differ from ours. The
// result is remembered for the client's lifetime: a runtime checked once
// costs no further requests.
func InstallCRDs(ctx context.Context, rt *remote.Runtime) error {
	want, err := wantedCRDsHash()
	if err != nil {
		return err
	}
	if rt.Facts.Recall("crds") == want {
		return nil
	}
	crds, err := crd.ByKind(CRDKinds...)
	if err != nil {
		return err
	}
	for _, c := range crds {
		if err := applyCRD(ctx, rt, c); err != nil {
			return err
		}
	}
	rt.Facts.Remember("crds", want)
	return nil
}

func applyCRD(ctx context.Context, rt *remote.Runtime, c *apiextensionsv1.CustomResourceDefinition) error {
	hash := crdsHash([]*apiextensionsv1.CustomResourceDefinition{c})
	var current apiextensionsv1.CustomResourceDefinition
	err := rt.Get(ctx, client.ObjectKey{Name: c.Name}, &current)
	switch {
	case err == nil && current.Annotations[shared.SpecHashAnnotation] == hash:
		return nil
	case err != nil && !apierrors.IsNotFound(err):
		return fmt.Errorf("reading CRD %s in the runtime: %w", c.Name, err)
	}
	desired := c.DeepCopy()
	desired.TypeMeta = metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"}
	desired.Annotations = map[string]string{shared.SpecHashAnnotation: hash}
	desired.Labels = map[string]string{shared.ManagedByLabel: shared.OperatorName}
	if err := runtimewrite.Apply(ctx, rt, desired); err != nil {
		return fmt.Errorf("installing CRD %s in the runtime: %w", c.Name, err)
	}
	return waitEstablished(ctx, rt, c.Name)
}

func waitEstablished(ctx context.Context, rt *remote.Runtime, name string) error {
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, crdEstablishTimeout, true, func(ctx context.Context) (bool, error) {
		var c apiextensionsv1.CustomResourceDefinition
		if err := rt.Get(ctx, client.ObjectKey{Name: name}, &c); err != nil {
			return false, err
		}
		for _, cond := range c.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for CRD %s to be established in the runtime: %w", name, err)
	}
	return nil
}

func ensureNamespace(ctx context.Context, rt *remote.Runtime) error {
	key := "namespace/" + rt.Namespace
	if rt.Facts.Recall(key) != "" {
		return nil
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: rt.Namespace}}
	if err := rt.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s in the runtime: %w", rt.Namespace, err)
	}
	rt.Facts.Remember(key, "exists")
	return nil
}

// wantedCRDsHash is the hash of the built-in CRDs, computed once: every
// reconcile of every runtime compares it with what the runtime has.
var wantedCRDsHash = sync.OnceValues(func() (string, error) {
	crds, err := crd.ByKind(CRDKinds...)
	if err != nil {
		return "", err
	}
	return crdsHash(crds), nil
})

func crdsHash(crds []*apiextensionsv1.CustomResourceDefinition) string {
	specs := make([]apiextensionsv1.CustomResourceDefinitionSpec, 0, len(crds))
	for _, c := range crds {
		specs = append(specs, c.Spec)
	}
	return runtimewrite.Hash(specs)
}

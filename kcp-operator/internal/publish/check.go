package publish

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/render"
)

// renderInput is a module's layers, rendered as the operator renders them.
type renderInput struct {
	module    string
	namespace string
	install   Layer
	config    *Layer
}

// rendered is what a module installs.
type rendered struct {
	objects  []*unstructured.Unstructured
	kinds    []render.DefinedKind
	warnings []string
}

// renderModule renders the install layer (and config) with the operator's
// renderer. Without a cluster, the scope of a kind that neither Kubernetes
// nor a CRD of the module defines is unknown: it is assumed namespaced and
// reported as a warning, because the runtime may well have it (Istio).
func renderModule(ctx context.Context, in renderInput) (*rendered, error) {
	req := render.Request{Module: in.module, Namespace: in.namespace, Install: render.Layer{Data: in.install.Data}}
	switch in.install.Name {
	case ResourceRawManifest:
		req.Type = render.RawManifest
	case ResourceHelmChart:
		req.Type = render.HelmChart
	default:
		return nil, fmt.Errorf("layer %q is neither %s nor %s", in.install.Name, ResourceRawManifest, ResourceHelmChart)
	}
	if in.config != nil {
		req.Config = &render.Layer{Data: in.config.Data}
	}
	guess := &scopeGuess{unknown: map[schema.GroupKind]bool{}}
	objs, err := render.New(render.Options{CacheEntries: -1}).Render(ctx, req, guess.scope)
	if err != nil {
		return nil, err
	}
	if len(objs) == 0 {
		return nil, errors.New("the module renders no objects")
	}
	kinds, err := render.DefinedKinds(objs)
	if err != nil {
		return nil, err
	}
	return &rendered{objects: objs, kinds: kinds, warnings: guess.warnings()}, nil
}

type scopeGuess struct {
	unknown map[schema.GroupKind]bool
}

func (g *scopeGuess) scope(gvk schema.GroupVersionKind) (bool, error) {
	if namespaced, err := render.BuiltinScope(gvk); err == nil {
		return namespaced, nil
	}
	// Unknown without a cluster: assume namespaced, as most kinds are, and warn.
	g.unknown[gvk.GroupKind()] = true
	return true, nil
}

func (g *scopeGuess) warnings() []string {
	out := make([]string, 0, len(g.unknown))
	for gk := range g.unknown {
		out = append(out, fmt.Sprintf("kind %s is defined neither by Kubernetes nor by a CRD of the module: "+
			"assumed namespaced; the runtime must provide it", gk))
	}
	sort.Strings(out)
	return out
}

// checkDefaultCR requires the default CR's kind and version to be defined
// and served by a CRD among the module's objects: the operator creates
// the CR right after the module's resources.
func checkDefaultCR(cr *unstructured.Unstructured, kinds []render.DefinedKind) error {
	gvk := cr.GroupVersionKind()
	for _, k := range kinds {
		if k.GroupKind != gvk.GroupKind() {
			continue
		}
		for _, v := range k.Versions {
			if v == gvk.Version {
				return nil
			}
		}
		return fmt.Errorf("version %s of %s is not served by CRD %s (served: %s)",
			gvk.Version, gvk.GroupKind(), k.CRD, strings.Join(k.Versions, ", "))
	}
	defined := make([]string, len(kinds))
	for i, k := range kinds {
		defined[i] = k.String()
	}
	have := "the module has no CRDs"
	if len(defined) > 0 {
		have = "its CRDs define " + strings.Join(defined, ", ")
	}
	return fmt.Errorf("kind %s is not defined by a CRD in the module's manifests (%s)", gvk.GroupKind(), have)
}

// describe names an object as "Kind namespace/name".
func describe(obj *unstructured.Unstructured) string {
	name := obj.GetName()
	if ns := obj.GetNamespace(); ns != "" {
		name = ns + "/" + name
	}
	return obj.GetKind() + " " + name
}

var managerKinds = map[schema.GroupKind]bool{
	{Group: "apps", Kind: "Deployment"}:  true,
	{Group: "apps", Kind: "StatefulSet"}: true,
}

// findManager returns the module's manager: the Deployment or StatefulSet
// named name, else the only Deployment. With several Deployments and no
// name there is none, and a warning says how to name one.
func findManager(objs []*unstructured.Unstructured, name string) (*v1beta2.Manager, string, error) {
	var deployments []*unstructured.Unstructured
	for _, obj := range objs {
		gk := obj.GroupVersionKind().GroupKind()
		if !managerKinds[gk] {
			continue
		}
		if name != "" && obj.GetName() == name {
			return managerOf(obj), "", nil
		}
		if gk.Kind == "Deployment" {
			deployments = append(deployments, obj)
		}
	}
	switch {
	case name != "":
		return nil, "", fmt.Errorf("--manager %s: the module has no Deployment or StatefulSet of that name", name)
	case len(deployments) == 1:
		return managerOf(deployments[0]), "", nil
	case len(deployments) == 0:
		return nil, "no manager: the module has no Deployment (name a StatefulSet with --manager)", nil
	default:
		names := make([]string, len(deployments))
		for i, d := range deployments {
			names[i] = d.GetName()
		}
		return nil, fmt.Sprintf("no manager: the module has %d Deployments (%s); name one with --manager",
			len(deployments), strings.Join(names, ", ")), nil
	}
}

func managerOf(obj *unstructured.Unstructured) *v1beta2.Manager {
	gvk := obj.GroupVersionKind()
	m := &v1beta2.Manager{Namespace: obj.GetNamespace(), Name: obj.GetName()}
	m.Group, m.Version, m.Kind = gvk.Group, gvk.Version, gvk.Kind
	return m
}

package options

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/types"
)

// SKRImagePullSecretName is the KCP Secret --skr-image-pull-secret names
// (zero without the flag). A plain name is in the first watched namespace,
// as the public operator reads it from kcp-system; the runtime's copy keeps
// the name, for that is what workloads reference.
func (o *Options) SKRImagePullSecretName() (types.NamespacedName, error) {
	if o.SKRImagePullSecret == "" {
		return types.NamespacedName{}, nil
	}
	ns, name, ok := strings.Cut(o.SKRImagePullSecret, "/")
	if !ok && len(o.Namespaces) > 0 {
		ns, name = o.Namespaces[0], o.SKRImagePullSecret
	}
	if ns == "" || name == "" || strings.Contains(name, "/") {
		return types.NamespacedName{}, fmt.Errorf("--skr-image-pull-secret %q: want name or namespace/name", o.SKRImagePullSecret)
	}
	return types.NamespacedName{Namespace: ns, Name: name}, nil
}

package options

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/types"
)

// DescriptorRegistry is where the operator reads the component descriptors
// that ModuleTemplates do not embed (spec.descriptor: {}), with the flag
// names of the public lifecycle manager (internal/componentsource).
type DescriptorRegistry struct {
	// Host is host[:port][/path]; http:// means plain HTTP.
	Host string
	// CredSecret is a dockerconfigjson Secret: name (in the first watched
	// namespace) or namespace/name.
	CredSecret string
	// SubPath is appended to Host.
	SubPath string
}

func (d *DescriptorRegistry) bind(fs *pflag.FlagSet) {
	fs.StringVar(&d.Host, "oci-registry-host", d.Host, "Registry (host[:port][/path]; http:// for plain HTTP) holding the OCM component versions of modules whose ModuleTemplate has no descriptor (spec.descriptor: {}, as the public modulectl writes them): the descriptor is read from <host>[/<subpath>]/component-descriptors/<ocmComponentName of the ModuleReleaseMeta>:<spec.version>. Empty with --oci-registry-cred-secret: that Secret's only login. Same name and meaning as in the public lifecycle manager.")
	fs.StringVar(&d.CredSecret, "oci-registry-cred-secret", d.CredSecret, "Secret (name in the first watched namespace, or namespace/name; type kubernetes.io/dockerconfigjson) with the login of --oci-registry-host, read again within 10s of a change; also the pull Secret of module layers (a ModuleTemplate can name its own with the label operator.kyma-project.io/oci-registry-cred).")
	fs.StringVar(&d.SubPath, "modules-repository-subpath", d.SubPath, "Path appended to --oci-registry-host (or the Secret's registry) under which the component versions of modules are stored.")
}

func (d DescriptorRegistry) validate() []error {
	var errs []error
	host := strings.TrimPrefix(strings.TrimPrefix(d.Host, "https://"), "http://")
	if d.Host != "" && (host == "" || strings.HasPrefix(host, "/") || strings.ContainsAny(host, "@?# ") || strings.Contains(host, "://")) {
		errs = append(errs, fmt.Errorf("--oci-registry-host %q: want [http://|https://]host[:port][/path]", d.Host))
	}
	if d.CredSecret != "" {
		if _, err := d.secret("ns"); err != nil {
			errs = append(errs, err)
		}
	}
	if d.SubPath != "" && d.Host == "" && d.CredSecret == "" {
		errs = append(errs, fmt.Errorf("--modules-repository-subpath needs --oci-registry-host or --oci-registry-cred-secret"))
	}
	return errs
}

// secret is the login Secret, in namespace unless it names its own.
func (d DescriptorRegistry) secret(namespace string) (types.NamespacedName, error) {
	ns, name, ok := strings.Cut(d.CredSecret, "/")
	if !ok {
		ns, name = namespace, d.CredSecret
	}
	if ns == "" || name == "" || strings.Contains(name, "/") {
		return types.NamespacedName{}, fmt.Errorf("--oci-registry-cred-secret %q: want name or namespace/name", d.CredSecret)
	}
	return types.NamespacedName{Namespace: ns, Name: name}, nil
}

// CredSecretName is the login Secret (zero without one); a plain name is
// in the first watched namespace, as the public operator's is in kcp-system.
func (o *Options) CredSecretName() types.NamespacedName {
	if o.DescriptorRegistry.CredSecret == "" || len(o.Namespaces) == 0 {
		return types.NamespacedName{}
	}
	n, _ := o.DescriptorRegistry.secret(o.Namespaces[0]) // validated
	return n
}

// AllInsecureRegistries are --insecure-registries and the host
// --oci-registry-host names with http://: its module layers are beside the
// descriptors.
func (o *Options) AllInsecureRegistries() []string {
	rest, ok := strings.CutPrefix(o.DescriptorRegistry.Host, "http://")
	if !ok {
		return o.InsecureRegistries
	}
	host, _, _ := strings.Cut(rest, "/")
	return append(slices.Clone(o.InsecureRegistries), host)
}

// LayerPullSecret is --oci-registry-cred-secret: the login of module
// layers from every registry (a template can name its own).
func (o *Options) LayerPullSecret() string {
	if n := o.CredSecretName(); n.Name != "" {
		return n.String()
	}
	return ""
}

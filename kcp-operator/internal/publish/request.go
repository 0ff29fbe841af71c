package publish

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/kcp-operator/internal/oci"
)

// Defaults of Request.
const (
	// DefaultNamespace is the control-plane namespace of the ModuleTemplate
	// and ModuleReleaseMeta.
	DefaultNamespace = "kcp-system"
	// DefaultProvider is the OCM provider of the component.
	DefaultProvider = "kyma-project.io"
	// ComponentPrefix is prepended to the module name to give the OCM
	// component name when Request.ComponentName is empty.
	ComponentPrefix = "kyma-project.io/module/"
)

// The patterns the ModuleTemplate and ModuleReleaseMeta CRDs enforce, so
// that what modulectl writes is never rejected by the control plane.
var (
	moduleNamePattern = regexp.MustCompile(`^[a-z]{3,}(-[a-z]{3,})*$`)
	semverPattern     = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`)
	channelPattern    = regexp.MustCompile(`^[a-z]{3,32}$`)
)

const maxNameLength = 64

// Request is a module version to publish.
type Request struct {
	// Name of the module, as users write it in a Kyma (e.g. keda).
	Name string
	// Version is a semantic version without a leading v.
	Version string
	// ComponentName is the OCM component; default ComponentPrefix + Name.
	ComponentName string
	// Provider of the OCM component; default DefaultProvider.
	Provider string

	// Manifests is a YAML file, or a folder of .yaml/.yml/.json files
	// (packed as a tar), with the module's raw manifests.
	Manifests string
	// Chart is a Helm chart folder (packed like `helm package`) or .tgz.
	Chart string
	// Config is a YAML file of Helm values laid over the chart's defaults.
	Config string
	// DefaultCR is a YAML file with the module's default custom resource.
	DefaultCR string

	// Registry is host[:port][/path], the OCM repository context's base URL.
	// An http:// prefix means plain HTTP, as Access.Insecure does.
	Registry string

	// Namespace of the ModuleTemplate and ModuleReleaseMeta; default DefaultNamespace.
	Namespace string
	// RuntimeNamespace is what the module is rendered for when it is
	// checked; default kyma-system, as the operator renders it.
	RuntimeNamespace string
	// Manager names the Deployment or StatefulSet that is the module's
	// manager, when the manifests have not exactly one Deployment.
	Manager string

	// Channels to assign this version to in the ModuleReleaseMeta.
	Channels []string
	// Mandatory makes this version the module's mandatory version in the
	// ModuleReleaseMeta instead.
	Mandatory bool
	// ReleaseMeta is a ModuleReleaseMeta file to merge into; it need not exist.
	ReleaseMeta string

	// SignKey is a PEM private key (ECDSA or Ed25519) to sign the
	// descriptor with; SignCert its optional certificate chain (PEM, leaf
	// first); SignName the signature's name (default signature.DefaultName).
	SignKey, SignCert, SignName string

	// EmbedDescriptor writes the descriptor into the ModuleTemplate too;
	// without it the template has descriptor: {}, as the public modulectl
	// writes it, and the operator reads the descriptor from the registry
	// (the component the ModuleReleaseMeta names, at spec.version).
	EmbedDescriptor bool

	// DryRun checks and builds everything, but pushes nothing.
	DryRun bool
	// Overwrite replaces a version already published with other content.
	Overwrite bool

	plainHTTP bool // the registry was given with http://
}

// normalize fills in defaults and checks the request before any file is read.
func (r *Request) normalize() error {
	if err := r.checkFlags(); err != nil {
		return err
	}
	if r.ComponentName == "" {
		r.ComponentName = ComponentPrefix + r.Name
	}
	if r.Provider == "" {
		r.Provider = DefaultProvider
	}
	if r.Namespace == "" {
		r.Namespace = DefaultNamespace
	}
	if r.RuntimeNamespace == "" {
		r.RuntimeNamespace = shared.DefaultRuntimeNamespace
	}
	if err := checkModuleName(r.Name); err != nil {
		return err
	}
	if err := checkVersion(r.Version); err != nil {
		return err
	}
	for _, ns := range []string{r.Namespace, r.RuntimeNamespace} {
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return invalid("namespace %q: %s", ns, strings.Join(errs, "; "))
		}
	}
	channels, err := checkChannels(r.Channels)
	if err != nil {
		return err
	}
	r.Channels = channels
	base, insecure, err := normalizeRegistry(r.Registry, r.ComponentName)
	if err != nil {
		return err
	}
	r.Registry, r.plainHTTP = base, insecure
	return nil
}

// checkFlags finds missing and conflicting inputs.
func (r *Request) checkFlags() error {
	switch {
	case r.Name == "":
		return usageError("the module name is missing (--name)")
	case r.Version == "":
		return usageError("the version is missing (--version)")
	case r.Registry == "":
		return usageError("the registry is missing (--registry host[:port]/path)")
	case r.Manifests == "" && r.Chart == "":
		return usageError("nothing to publish: give the raw manifests (--manifest) or a Helm chart (--chart)")
	case r.Manifests != "" && r.Chart != "":
		return usageError("--manifest and --chart exclude each other: a module installs one or the other")
	case r.Config != "" && r.Chart == "":
		return usageError("--config holds Helm values and needs --chart; raw manifests take no values")
	case r.Mandatory && len(r.Channels) > 0:
		return usageError("--mandatory and --channel exclude each other: a mandatory module has one version everywhere")
	case r.ReleaseMeta != "" && !r.Mandatory && len(r.Channels) == 0:
		return usageError("--release-meta needs --channel or --mandatory: there is nothing to merge into it")
	case r.SignKey == "" && (r.SignCert != "" || r.SignName != ""):
		return usageError("--sign-cert and --sign-name need --sign-key: the key signs, the certificate and the name describe it")
	}
	return nil
}

func checkModuleName(name string) error {
	if len(name) > maxNameLength || !moduleNamePattern.MatchString(name) {
		return invalid("module name %q: want lower-case words of three or more letters joined by dashes (e.g. keda, api-gateway), at most %d characters", name, maxNameLength)
	}
	return nil
}

func checkVersion(version string) error {
	if len(version) > maxNameLength || !semverPattern.MatchString(version) {
		hint := ""
		if strings.HasPrefix(version, "v") && semverPattern.MatchString(version[1:]) {
			hint = fmt.Sprintf(" (write %s, without the v)", version[1:])
		}
		return invalid("version %q is not a semantic version MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD]%s", version, hint)
	}
	return nil
}

// checkChannels validates channel names and drops repeats, keeping the order.
func checkChannels(channels []string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	for _, c := range channels {
		if !channelPattern.MatchString(c) {
			return nil, invalid("channel %q: want 3 to 32 lower-case letters (e.g. regular, fast)", c)
		}
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	return out, nil
}

// normalizeRegistry strips a scheme (http:// means plain HTTP) and a
// trailing slash, and checks that the component's repository under it is
// a valid OCI repository name.
func normalizeRegistry(registry, component string) (string, bool, error) {
	base, insecure := registry, false
	if rest, ok := strings.CutPrefix(base, "http://"); ok {
		base, insecure = rest, true
	} else if rest, ok := strings.CutPrefix(base, "https://"); ok {
		base = rest
	}
	base = strings.TrimSuffix(base, "/")
	repo := oci.ComponentRepository(base, component)
	if _, err := name.NewRepository(repo, name.StrictValidation); err != nil {
		return "", false, invalid("registry %q: the component repository %s is not a valid OCI repository: %w", registry, repo, err)
	}
	return base, insecure, nil
}

// registryHost returns host[:port] of a repository or base URL.
func registryHost(repository string) string {
	host, _, _ := strings.Cut(repository, "/")
	return host
}

// templateName is <module>-<version> as a Kubernetes name: the build
// metadata's "+" becomes "-" and upper-case letters of a pre-release are
// lowered.
func templateName(module, version string) (string, error) {
	n := strings.ToLower(strings.ReplaceAll(module+"-"+version, "+", "-"))
	if errs := validation.IsDNS1123Subdomain(n); len(errs) > 0 {
		return "", invalid("the ModuleTemplate name %q is not a valid Kubernetes name: %s", n, strings.Join(errs, "; "))
	}
	return n, nil
}

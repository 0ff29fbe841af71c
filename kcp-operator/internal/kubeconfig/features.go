package kubeconfig

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Feature is a kubeconfig feature beyond inline credentials that the
// operator refuses unless it is allowed (--runtime-kubeconfig-allow).
type Feature string

// The features that can be allowed. auth-provider and a plain-HTTP server
// are not among them: the operator has no auth-provider plugins, and
// client-go sends no credentials over plain HTTP, so neither could work.
const (
	// Exec runs the user's exec plugin: a program from the operator's image,
	// run as the operator with the operator's environment (plus the
	// kubeconfig's env), so it can read everything the operator can.
	Exec Feature = "exec"
	// Files reads certificate-authority, client-certificate, client-key and
	// tokenFile from the operator's filesystem, where its own
	// service-account token and keys are.
	Files Feature = "files"
	// ProxyURL connects to the runtime through the cluster's proxy-url, an
	// address of the kubeconfig's choosing seen from the KCP's network.
	ProxyURL Feature = "proxy-url"
	// InsecureSkipTLSVerify does not verify the server's certificate: anyone
	// on the path can read the credentials.
	InsecureSkipTLSVerify Feature = "insecure-skip-tls-verify"
	// BasicAuth sends the user's username and password.
	BasicAuth Feature = "basic-auth"
	// Impersonation makes every request act as another user, UID, groups
	// or extra (as, as-uid, as-groups, as-user-extra) in the runtime.
	Impersonation Feature = "impersonation"
)

// Features lists every Feature that can be allowed, in the order of the docs.
func Features() []Feature {
	return []Feature{Exec, Files, ProxyURL, InsecureSkipTLSVerify, BasicAuth, Impersonation}
}

// Allow is the set of allowed features; its zero value allows none.
type Allow struct {
	set map[Feature]bool
}

// Allows reports whether f is allowed.
func (a Allow) Allows(f Feature) bool { return a.set[f] }

// String lists the allowed features, comma-separated.
func (a Allow) String() string {
	var out []string
	for _, f := range Features() {
		if a.set[f] {
			out = append(out, string(f))
		}
	}
	return strings.Join(out, ",")
}

// ParseAllow reads the values of --runtime-kubeconfig-allow. Unknown values
// are an error, so that a typo does not silently leave a feature refused,
// nor a value that names a refused-for-good feature look allowed.
func ParseAllow(values []string) (Allow, error) {
	a := Allow{set: map[Feature]bool{}}
	var errs []error
	for _, v := range values {
		f := Feature(strings.TrimSpace(v))
		if f == "" {
			continue
		}
		if !slices.Contains(Features(), f) {
			errs = append(errs, fmt.Errorf("unknown kubeconfig feature %q, want one of %s", v, featureList()))
			continue
		}
		a.set[f] = true
	}
	if len(errs) > 0 {
		return Allow{}, errors.Join(errs...)
	}
	return a, nil
}

func featureList() string {
	names := make([]string, 0, len(Features()))
	for _, f := range Features() {
		names = append(names, string(f))
	}
	return strings.Join(names, ", ")
}

package componentsource

import (
	"errors"

	"github.com/lifecycle-manager/kcp-operator/internal/oci"
)

// Reasons of an *Error, for conditions and Events.
const (
	// ReasonRegistryNotConfigured: a template without a descriptor, and no
	// registry to read it from (--oci-registry-host, --oci-registry-cred-secret).
	ReasonRegistryNotConfigured = "DescriptorRegistryNotConfigured"
	// ReasonComponentNameMissing: no ModuleReleaseMeta names the module's
	// OCM component (spec.ocmComponentName).
	ReasonComponentNameMissing = "ComponentNameMissing"
	// ReasonComponentNotFound: the registry has no repository for the component.
	ReasonComponentNotFound = "ComponentNotFound"
	// ReasonVersionNotFound: the component has no tag for the version.
	ReasonVersionNotFound = "ComponentVersionNotFound"
	// ReasonCredentials: the login Secret cannot be read or parsed.
	ReasonCredentials = "RegistryCredentialsInvalid"
	// ReasonInvalidDescriptor: what the registry holds is not a descriptor
	// of that component version.
	ReasonInvalidDescriptor = "InvalidDescriptor"
)

// Error is a descriptor that could not be read from the registry.
type Error struct {
	// Reason is one of the Reason constants, or an oci.Reason
	// (RegistryUnreachable, RegistryUnauthorized, ...).
	Reason string
	Err    error
}

func (e *Error) Error() string { return e.Err.Error() }

func (e *Error) Unwrap() error { return e.Err }

// ReasonOf returns the reason of an *Error in err's chain, or "".
func ReasonOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}

// classify gives a registry error its reason.
func classify(err error) string {
	switch {
	case errors.Is(err, oci.ErrNotFound):
		return ReasonVersionNotFound
	case oci.Reason(err) != "":
		return oci.Reason(err)
	default:
		return ReasonInvalidDescriptor
	}
}

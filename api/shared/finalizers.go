package shared

import "slices"

// PublicManifestFinalizers are the finalizers the public lifecycle manager
// puts on a Manifest. Nobody removes them once this operator runs the KCP,
// so the operator replaces them by its own and removes them on deletion.
func PublicManifestFinalizers() []string {
	return []string{PublicManifestFinalizer, PublicLabelRemovalFinalizer, PublicDefaultCRFinalizer}
}

// HasPublicManifestFinalizer reports whether finalizers hold one of
// PublicManifestFinalizers.
func HasPublicManifestFinalizer(finalizers []string) bool {
	return slices.ContainsFunc(finalizers, func(f string) bool { return slices.Contains(PublicManifestFinalizers(), f) })
}

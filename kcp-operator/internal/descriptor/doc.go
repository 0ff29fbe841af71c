// Package descriptor parses OCM component descriptors, the documents in a
// ModuleTemplate's spec.descriptor that say where a module's layers live:
// schema v2 (meta.schemaVersion: v2) and ocm.software/v3alpha1. It keeps
// only what the operator and modulectl use — name, version, provider,
// labels, repository contexts and resources with their access — and checks
// those parts strictly, so that a bad descriptor fails with a message that
// names the field instead of failing later in a registry call.
package descriptor

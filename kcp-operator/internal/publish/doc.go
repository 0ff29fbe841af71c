// Package publish turns a module team's manifests or Helm chart into what
// the operator consumes, and checks a published module the way the
// operator will use it. It is the behaviour of modulectl; the binary only
// parses flags and prints.
//
// # Publish
//
// Publish reads the module (raw manifests: a YAML file, or a folder packed
// as a reproducible tar; or a Helm chart: a folder packed like `helm
// package` with fixed file times, or a .tgz), the optional Helm values
// (config) and default CR, and checks everything before anything is
// pushed: the name and version match the patterns the CRDs enforce; the
// module renders with the operator's renderer (package render) for the
// runtime namespace (kyma-system), so manifests parse and a chart renders
// with its defaults under the config values; the default CR's kind and
// version are defined and served by a CRD among the module's objects; the
// ModuleReleaseMeta file to merge into belongs to the module. Errors name
// the flag, the file, the document and the object.
//
// The layers are pushed as local blobs of an OCM component version
// (schema v2) with package oci: the component
// kyma-project.io/module/<name> lives in
// <registry>/component-descriptors/<component>, tagged with the version;
// the resources raw-manifest or helm-chart, and config, are localBlob
// accesses whose localReference is the blob digest. That is what the
// operator's Kyma controller turns into a Manifest's ImageSpec. A version
// already in the registry with other content is refused (a version is a
// promise that its content does not change) unless Overwrite is set;
// publishing the same input again gives the same digests and is reported
// as Unchanged.
//
// The result holds the ModuleTemplate <name>-<version> (moduleName,
// version, data = default CR, descriptor, manager = the only Deployment
// or the named one, the module-name label) and, with channels or
// mandatory, the ModuleReleaseMeta <name> merged into an existing file.
//
// # Signing
//
// With Request.SignKey (an ECDSA or Ed25519 key, optionally with its
// certificate chain), the descriptor is signed as package signature
// describes: the digest of the default CR is recorded in the descriptor's
// label signature.DefaultCRLabel first, so that the signature covers the
// layers by their digests and the default CR alike, and the template gets
// the label operator.kyma-project.io/signature naming the signature.
// Signing is deterministic: publishing the same module with the same key
// again changes nothing.
//
// # Verify
//
// Verify takes a ModuleTemplate, checks its signature against
// VerifyRequest.Trust when given, checks that the registry holds the same
// descriptor for its version, fetches every layer of the module (each is
// checked against its digest by package oci), renders it as the operator
// does, and checks the default CR against the module's CRDs. It returns
// the objects the operator would apply, in apply order, and the default
// CR as the operator would create it.
//
// Without a cluster, the scope of kinds that neither Kubernetes nor the
// module's CRDs define is unknown: both assume them namespaced and warn.
//
// # Errors and exit codes
//
// Every error is an *Error of a kind (ErrUsage, ErrInvalidInput,
// ErrRegistry, ErrVerification, ErrOutput); ExitCode maps them to the
// exit codes of modulectl: 0 ok, 1 usage, 2 invalid input, 3 registry,
// 4 verification failed, 5 output not written, 130 interrupted.
package publish

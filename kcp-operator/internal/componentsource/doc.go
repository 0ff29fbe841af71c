// Package componentsource reads the OCM component descriptors of modules
// whose ModuleTemplate does not embed one (spec.descriptor: {}, as the
// public modulectl writes templates) from the modules' OCI registry.
//
// The layout is OCM's OCI mapping, as the public lifecycle manager reads
// it: the component version <name>:<version> is the tag <version> of the
// repository <host>[/<subpath>]/component-descriptors/<name>, where host
// and subpath are the operator's --oci-registry-host and
// --modules-repository-subpath; the tag names an OCI manifest whose config
// points at the layer (a tar with component-descriptor.yaml) that holds
// the descriptor. The name comes from the module's ModuleReleaseMeta
// (spec.ocmComponentName), the version from the template's spec.version.
//
// Registry logins come from the dockerconfigjson Secret of
// --oci-registry-cred-secret, read again at most every SecretTTL; without
// --oci-registry-host, the registry is that Secret's only login, as in the
// public lifecycle manager.
//
// Descriptors are kept in memory by the digest of the manifest the tag
// names and of the descriptor layer: resolving a module again costs at
// most the tag's resolution (once per oci.DefaultTagTTL), and a tag that
// still names the same manifest downloads nothing more.
//
// A descriptor from the registry has the registry's repository as its last
// repository context, so that its local blobs (the module's layers) are
// found where the descriptor was found, also when a copy was transferred
// from elsewhere.
//
// Every failure is an *Error whose Reason tells the registry that is not
// configured, the component or the version that is missing, and the
// registry's own trouble apart.
package componentsource

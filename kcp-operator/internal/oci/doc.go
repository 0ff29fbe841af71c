// Package oci moves module layers between OCI registries and the operator
// (Fetcher) or modulectl (Pusher). It builds on go-containerregistry and
// knows nothing of controller-runtime.
//
// # Fetching
//
// A Ref names a layer: a blob by digest (OCM localBlob and ociBlob access),
// or an image by tag or digest whose single content layer is the content
// (ociArtifact access; a Helm chart's provenance layer does not count).
// RefFromLayer builds one from descriptor.LayerOf, RefFromImageSpec from a
// Manifest's spec.install.source or spec.config. Because ImageSpec does not
// say whether a digest names a blob or a manifest, a digest that is not a
// blob in the registry is tried as a manifest, and a "blob" that is an
// image manifest (registries built on the distribution project serve
// manifests from the blob endpoint too) is followed to its content layer.
//
// Everything downloaded is hashed and compared with its digest before it
// is returned or cached; a tag is resolved to a manifest digest first.
// Pin does only that resolution, so that callers can key their own caches
// (the render cache) by content without downloading anything.
//
// # The disk cache
//
// With Options.CacheDir set, verified blobs and manifests are kept as
// <dir>/blobs/sha256/<hex> and <dir>/manifests/sha256/<hex>:
//   - Writes go to <dir>/tmp and are renamed into place, so a file under a
//     digest name is always complete; tmp is emptied at start.
//   - The total size is bounded by Options.MaxCacheBytes; the least recently
//     used entries are evicted first. Recency is kept in memory and, at most
//     once a minute per entry, in the file's mtime, which orders the entries
//     found at the next start. A layer larger than the bound is returned
//     but not cached.
//   - After a restart, entries are not trusted by name: each is re-hashed on
//     its first read (lazily, so a start does not read the whole cache) and
//     dropped and downloaded again when it does not match. This catches
//     disk corruption and tampering at the cost of one hash per entry per
//     process.
//   - Concurrent fetches of one object with the same login share one
//     download (single flight). The download runs on a context detached
//     from the first caller, bounded by Options.Timeout, so one caller
//     giving up fails nobody else; callers stop waiting when their own
//     context ends.
//   - Tags are remembered for Options.TagTTL; a digest is forever.
//   - The cache is keyed by digest only, not by repository or login: the
//     digest is the content, and descriptors come from the control plane's
//     ModuleTemplates, which platform admins own. A module that names a
//     digest gets that content even if it was downloaded with another
//     module's login. One process owns a cache directory.
//
// There is no in-memory front: a hit is one file read, and the render cache
// (package render) already keeps the rendered result of an unchanged
// Manifest, so its layers are not read at all.
//
// # Credentials
//
// Credentials holds registry logins read from a Docker config: the
// .dockerconfigjson of a kubernetes.io/dockerconfigjson Secret
// (CredentialsFromSecretData), ~/.docker/config.json, or one username and
// password (BasicCredentials). It is an authn.Keychain, so any keychain
// (e.g. authn.DefaultKeychain in modulectl) can be passed instead; nil is
// anonymous. Registries without a login are accessed anonymously.
//
// # Errors
//
// Every error is an *Error whose Kind is ErrNotFound, ErrUnauthorized,
// ErrUnreachable, ErrDigestMismatch, ErrTooLarge or ErrInvalid (test with
// errors.Is); Reason gives a condition reason. ErrUnreachable is worth a
// retry with backoff, the others need a change of input or registry.
// Nothing is retried inside a Fetcher: the controller requeues.
//
// # Publishing (modulectl)
//
// PushComponentVersion follows OCM's OCI mapping (ocm-spec, appendix A,
// "OCI Registries"): the component version lives in the repository
// <baseUrl>/component-descriptors/<component name> (ComponentRepository),
// tagged with the version ("+" written as ".build-", VersionTag), as an OCI
// image manifest whose config (ComponentConfigMediaType) has a
// componentDescriptorLayer pointing at layer 0, a tar with
// component-descriptor.yaml (ComponentDescriptorMediaType); the local
// blobs are the further layers, each with the media type given, so a
// localBlob's localReference is its layer digest. A module publisher
// therefore: computes Digest of each layer, writes a descriptor whose
// repository context is the registry base URL and whose localBlob resources
// name those digests, and pushes both. That is exactly what
// descriptor.LayerOf resolves: <baseUrl>/component-descriptors/<name>@<digest>.
// ComponentDescriptor reads a version back. PushArtifact publishes a
// single-layer image by tag, the form ociArtifact access points to.
package oci

// Package signature signs module versions and checks their signatures.
//
// # What is signed
//
// A signature covers the component descriptor of a module version: the
// SHA-256 digest of its canonical form, which is the descriptor as
// deterministic JSON (object keys sorted, no insignificant space, numbers
// by value, null members left out) without its top-level "signatures"
// list. The descriptor names every layer by its digest, and the operator
// verifies each layer against that digest when it downloads it (package
// oci), so a signature over the descriptor covers the module's content.
// Two rules keep that true: a layer the operator installs from (raw
// manifests, Helm chart, config) must be pinned by digest, not by a tag
// that can move; and the ModuleTemplate's default CR (spec.data), which the
// operator creates in the runtime but which lives outside the descriptor,
// must match the digest modulectl records in the descriptor's label
// DefaultCRLabel. YAML and JSON forms of a descriptor, and the form the API
// server returns, have the same canonical form.
//
// # Where the signature is
//
// Signatures are a list in the descriptor itself, beside meta and
// component (as OCM keeps them, written here without OCM's code): each has
// a name, the digest it signed ({hashAlgorithm, normalisationAlgorithm,
// value}) and the signature ({algorithm, value as hex, mediaType and, for
// a key with a certificate, the certificate chain as PEM}). The
// ModuleTemplate names the signature to check in its label
// operator.kyma-project.io/signature.
//
// # Keys and trust
//
// A signature is made with an ECDSA key (any of P-256, P-384, P-521; the
// signature is deterministic, RFC 6979, so that publishing the same module
// again gives the same descriptor) or an Ed25519 key. A signature without a
// certificate verifies against trusted public keys; one with a certificate
// verifies when the certificate chains to a trusted CA, is valid now (not
// expired) and allows code signing. Trust anchors are PEM: PUBLIC KEY
// blocks for keys, CERTIFICATE blocks for CAs.
//
// # The operator's policy
//
// Checker applies a Policy to ModuleTemplates: off checks nothing; warn
// installs a module whose signature is missing or does not verify, and
// says why in the Verdict; enforce refuses it. A Kyma can raise the
// operator's policy for itself with the label SignaturePolicyLabel, never
// lower it. Verdicts are cached per template version and trust revision
// until the signing certificate expires.
package signature

// Package certmanagertest runs the real cert-manager controllers (its CA
// and self-signed issuers, Certificates, CertificateRequests and their
// approval; built from cert-manager's own packages by hack/cert-manager.sh)
// against a test's API server, with cert-manager's CRDs of the same
// version from the Go module cache, and sets up a private CA issuer the way
// a cluster would. cert-manager's webhook does not run, so nothing refuses
// the seconds-long certificate lifetimes that tests use to see renewals.
package certmanagertest

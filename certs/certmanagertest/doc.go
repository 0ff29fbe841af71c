// Package certmanagertest lets tests run the cert-manager backend against a
// real kube-apiserver where the cert-manager controller cannot run. It finds
// cert-manager's CRDs in the Go module cache, sets up a self-signed CA
// issuer the way a cluster would, and provides FakeCertManagerSigner: a test
// double that plays cert-manager's signing role by watching Certificate
// objects and writing their Secrets and status as cert-manager would. It is
// for tests only.
package certmanagertest

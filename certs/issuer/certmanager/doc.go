// Package certmanager is the backend that lets cert-manager sign: for each
// request it keeps a cert-manager.io/v1 Certificate (commonName = runtime ID,
// the request's DNS names and IPs, the configured issuer reference) in the
// PKI namespace, and copies what cert-manager issues into the request's
// Secret together with the trust bundle.
//
// cert-manager writes into an intermediate Secret (<certificate>-issued) that
// it alone owns; the request's Secret is written by this package only. That
// keeps ca.crt the whole trust bundle at all times (cert-manager would put
// just the issuing CA there on every issuance), and it lets the rotation hold
// a certificate from a new CA back until the trust bundle reached its peers,
// exactly as the built-in backend does.
//
// Re-issuance that cert-manager would not start by itself (a CA rotation, or
// renewal by this package's clock) is requested as `cmctl renew` does, with
// the Issuing condition. The CA comes from the Secret the issuer signs with
// (config.Options.CASecret); RotateCA asks cert-manager to re-issue the
// Certificate that Secret belongs to.
package certmanager

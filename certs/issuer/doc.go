// Package issuer defines how the push-path PKI issues certificates, whatever
// signs them: the Issuer interface (ensure a certificate Secret, remove it),
// the CASource interface (the CA the backend signs with, and starting a new
// one), and the checks both backends share to decide whether a certificate
// still serves its request. The backends live in builtin (a CA in a KCP
// Secret, signing in-process) and certmanager (cert-manager Certificates).
package issuer

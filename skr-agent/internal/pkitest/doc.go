// Package pkitest makes certificates and TLS files for the agent's tests,
// with the certs module's pki package: a CA, leaf certificates valid for
// localhost and 127.0.0.1, and files replaced the way a Secret volume
// replaces them.
package pkitest

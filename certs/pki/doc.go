// Package pki creates and parses the keys and X.509 certificates of the push
// path: self-signed CAs, and leaf certificates for clients (CN = runtime ID),
// servers, or both. It uses the standard library only, so that the agent can
// import it.
package pki

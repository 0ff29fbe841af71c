// Package denylist holds the certificates that are refused although they
// chain to a trusted CA: a single leaked runtime certificate is denied by
// its serial number (optionally with its issuer's key ID) until it expires
// or is replaced, without a CA rotation. The listener checks it on every
// request; the PKI re-issues a denied agent certificate.
//
// The text format, one entry per line, '#' starts a comment:
//
//	# serial number in hex, as `openssl x509 -noout -serial` prints it
//	4A3F0C...
//	# colons are fine; an optional second field limits the entry to the
//	# CA with that subject key ID (the leaf's authority key ID)
//	4a:3f:0c:...  9b:21:...
//
// It uses the standard library only, like package pki.
package denylist

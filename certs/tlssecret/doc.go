// Package tlssecret is the Secret layout of TLS material on the push path:
// ca.crt (the trust bundle, one or more CA certificates), tls.crt and tls.key.
// It validates that material with clear errors, hashes it for change
// detection, and loads it into tlsreload's KeyPair and Bundle, so that a
// server or client can be fed from Secret data as well as from mounted files.
package tlssecret

// Package identity establishes which runtime sent a request: the CN of a
// client certificate that chains to the trusted CA bundle, taken either
// from the TLS connection (direct mode) or from the X-Forwarded-Client-Cert
// header of a trusted proxy (gateway mode). Every failure carries a short
// reason for metrics and answers.
package identity

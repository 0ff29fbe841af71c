// Package certs is the module of the push path's PKI: the CA, per-runtime
// client certificates, the gateway certificate, their rotation, and
// hot-reloading TLS configuration for servers and clients.
package certs

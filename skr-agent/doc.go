// Package skragent is the module of the skr-agent binary: the admission
// webhook in every runtime that forwards change events to the KCP listener.
// The binary is cmd/skr-agent; its behaviour lives in internal/, one package
// per concern; README.md describes flags, metrics and measurements.
package skragent

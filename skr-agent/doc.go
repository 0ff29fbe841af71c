// Package skragent is the module of the skr-agent binary: the admission
// webhook in every runtime that forwards change events to the KCP listener.
// The binary will live in cmd/skr-agent, its behaviour in internal/.
package skragent

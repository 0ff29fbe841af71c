// Package server runs the agent's two HTTP servers: the webhook on TLS only,
// and a plain-HTTP port for /metrics, /healthz and /readyz that never serves
// the webhook. Listening happens when a server is created, so that a port in
// use fails the start instead of a background goroutine.
package server

// Package runtimesync puts an agent's TLS material into its runtime: the
// Secret skr-agent-tls (ca.crt, tls.crt, tls.key) in kyma-system by default,
// written by server-side apply with its own field owner. A content hash in
// an annotation, checked together with the data itself, makes an unchanged
// Secret cost one read and no write, which matters when thousands of
// runtimes are reconciled.
package runtimesync

// Package kcp is the agent's client of the KCP listener: one long-lived
// HTTP/2 (or keep-alive HTTP/1.1) mTLS client that posts an event and says
// what the answer means for a retry. The TLS config it is given reads the
// current client certificate and CA bundle at every handshake; after a
// reload, Reconnect makes the next events use new connections and so the
// new material.
package kcp

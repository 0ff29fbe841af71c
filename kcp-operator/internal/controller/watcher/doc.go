// Package watcher is the Watcher controller: for every Watcher it keeps an
// Istio VirtualService that routes the Watcher's event path
// (/v1/<manager>/event and /v2/<manager>/event) from the Istio Gateways its
// selector picks to the listener Service it names, and reports the result
// in the Watcher's status. It can also keep the Gateway of the event
// endpoint itself (mTLS with the server certificate and CA bundle that the
// certs package issues), configured by flags.
package watcher

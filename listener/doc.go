// Package listener receives the change events that the agents in the
// runtimes push to the control plane and hands them, coalesced and without
// ever blocking a request on a slow consumer, to the consumer of the
// manager they are addressed to.
//
// An agent POSTs the runtime-watcher body to /{contract}/{manager}/event
// (contract v1 or v2). Its runtime ID is the CN of its client certificate,
// which the listener takes from the mTLS connection it terminates itself
// (ModeDirect) or from the X-Forwarded-Client-Cert header of a trusted
// gateway (ModeGateway); either way the certificate is verified against the
// current CA bundle. Accepted events become event.Event values in a
// bounded queue per manager, keyed by manager, runtime ID, GVK and object,
// so that a burst of events for one object is delivered once. Each runtime
// has a token bucket, so that one that floods is refused (429) on its own
// instead of filling the queue that all runtimes share.
//
// A Server is a controller-runtime manager.Runnable; package eventsource
// turns the events of one manager into reconcile requests.
package listener

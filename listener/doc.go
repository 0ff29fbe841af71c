// Package listener will receive the change events that the agents in the
// runtimes push over mTLS and turn them into targeted reconcile requests for
// controller-runtime (see issue "listener").
package listener

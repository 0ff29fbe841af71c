// Package event holds the change event that the listener hands to its
// consumers, the key under which events are coalesced, and the decoder of
// the runtime-watcher wire format that agents send.
package event

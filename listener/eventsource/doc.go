// Package eventsource connects the listener to controller-runtime: a
// source.Source that turns the events of one manager into reconcile
// requests through a mapping function of the embedder, for
// builder.WatchesRawSource or Controller.Watch.
package eventsource

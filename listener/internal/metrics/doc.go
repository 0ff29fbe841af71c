// Package metrics defines the listener's Prometheus metrics and registers
// them on the registerer the embedder hands in; nothing is global.
package metrics

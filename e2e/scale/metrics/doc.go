// Package metrics reads a Prometheus text endpoint, such as the operator's
// /metrics, and sums series by name and labels.
package metrics

// Package stats summarises measurements: nearest-rank percentiles of
// latencies and rates over time series.
package stats

// Package pushindex measures the push path's last hop and maps pushed
// events to the Kymas they concern.
package pushindex

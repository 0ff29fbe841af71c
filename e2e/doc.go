// Package e2e is the module of the two-cluster end-to-end suite, the local
// demo and the scale harness.
package e2e

// Package kcpindex registers the cache indexes that find the objects of a
// Kyma: its access Secret and its Manifests. A label selector scans every
// object of the namespace in the cache; at thousands of Kymas each
// reconcile would pay for all of them.
package kcpindex

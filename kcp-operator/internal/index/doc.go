// Package index holds the field indexes of the manager's cache on KCP
// objects and the lookups that use them: the Secrets and Manifests of a
// Kyma (by its kyma-name label), the Kyma of a runtime ID, and the
// Manifests that placed a given object in a runtime. A label selector or a
// list of every Kyma scans every object of the namespace in the cache; at
// thousands of Kymas each reconcile, and each pushed event, would pay for
// all of them.
//
// Register adds these indexes; the lookups need them. Add is how the
// packages that own other indexes (module resolution, the Kyma
// controller's) register theirs.
package index

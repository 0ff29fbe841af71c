// Package shard splits the fleet over operator instances. A Kyma is
// reconciled by the instance whose --shard its label
// operator.kyma-project.io/shard names; that instance's caches hold only
// such Kymas and their Manifests and Secrets. The first shard of the
// shard list (ConfigMap lifecycle-manager-shards) assigns unlabelled Kymas
// by rendezvous hashing of the runtime ID, so that adding or removing a
// shard moves only the Kymas that must move.
//
// A Kyma changes hands without overlapping writes: the shard that
// reconciled it records itself in the operator.kyma-project.io/shard-owner
// annotation; a new shard claims the Kyma only after the old one removed
// the annotation, which it does once its in-flight reconciles of that Kyma
// ended (Fence), or once the old shard's Lease is no longer held (a shard
// that cannot renew its Lease has stopped writing). Nothing is cleaned up
// on the way: the new shard takes the Manifests and Secrets over by
// relabelling them. docs/design/shards.md says why.
package shard

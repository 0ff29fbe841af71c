// Package crdupgrade puts this operator's CustomResourceDefinitions into a
// control plane, also one that the public lifecycle manager ran before.
//
// Its CRDs may still list v1beta1 in status.storedVersions: objects written
// while v1beta1 was the storage version. The API server refuses a CRD that
// drops a version still listed there, so applying ours (v1beta2 only) would
// fail. Upgrade therefore migrates first, as the Kubernetes documentation
// on CRD versioning describes: it makes a version we serve the storage
// version, rewrites every object so that it is stored in that version,
// sets storedVersions to it alone, and only then applies our CRD.
//
// `kcp-operator --upgrade-crds` runs it and exits; the chart runs that as a
// pre-install and pre-upgrade hook.
package crdupgrade

// Package crdupgrade puts this operator's CustomResourceDefinitions into a
// control plane, also one that the public lifecycle manager ran before.
//
// Its CRDs may still list v1beta1 in status.storedVersions: objects written
// while v1beta1 was the storage version. Our CRDs list v1beta1 too, but only
// served through the operator's conversion webhook (and unserved without
// it), never stored: an object still stored as v1beta1 would need the
// webhook for every v1beta2 read, the operator's own included, and older
// releases of ours had no v1beta1 at all, which the API server refuses
// while storedVersions lists it. Upgrade therefore migrates first, as the
// Kubernetes documentation on CRD versioning describes: it makes our
// storage version the installed CRD's storage version, rewrites every
// object so that it is stored in it (through the installed CRD's
// conversion: the webhook does not run during the hook), sets
// storedVersions to it alone, and only then applies our CRD.
//
// The CRDs it applies carry the conversion stanza when the caller put it
// there (internal/conversion.Configure, with --webhook-service); the caBundle is the operator's to write. Applied without
// one, a CRD's conversion is set back to None first: the operator's
// caBundle would otherwise outlive the stanza and make the CRD invalid.
//
// `kcp-operator --upgrade-crds` runs it and exits; the chart runs that as a
// pre-install and pre-upgrade hook.
package crdupgrade

// Package v1beta1 is the operator.kyma-project.io/v1beta1 API of the public
// lifecycle manager's original documentation: Kymas with spec.sync,
// ModuleTemplates with spec.target, and Manifests. It is served beside
// v1beta2, which stays the storage version: the operator's conversion
// webhook converts every object through v1beta2 (the hub), and what one
// version has no field for travels in an annotation (see conversion.go), so
// that an object written in one version reads back unchanged in it.
//
// Without the conversion webhook the CRDs leave v1beta1 unserved, so that a
// v1beta1 request fails with "not found" instead of losing spec.sync or
// spec.target to pruning (kcp-operator --upgrade-crds turns it on).
//
// +kubebuilder:object:generate=true
// +groupName=operator.kyma-project.io
package v1beta1

// Package v1beta2 is the operator.kyma-project.io/v1beta2 API: Kyma,
// Manifest, ModuleTemplate, ModuleReleaseMeta and Watcher. It is field
// compatible with the public Kyma lifecycle-manager, so existing YAML applies
// unchanged, and it depends on apimachinery only so that module operators can
// import it cheaply.
//
// +kubebuilder:object:generate=true
// +groupName=operator.kyma-project.io
package v1beta2

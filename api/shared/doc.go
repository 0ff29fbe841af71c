// Package shared holds what every API version of operator.kyma-project.io
// agrees on: the label and annotation keys, the states a managed object can
// be in, and the status blocks that several kinds embed.
//
// +kubebuilder:object:generate=true
package shared

// Package runtimebase puts in place what every runtime needs before the
// operator writes anything else there: the Kyma, ModuleTemplate and
// ModuleReleaseMeta CRDs and the runtime namespace. It also holds the small
// apply and hash helpers that the controllers writing into runtimes share.
package runtimebase

// Package runtimebase puts in place what every runtime needs before the
// operator writes anything else there: the Kyma, ModuleTemplate and
// ModuleReleaseMeta CRDs and the runtime namespace. It also holds the small
// write and hash helpers that the controllers writing into runtimes share:
// a create for what is new, and an apply that, on an object the create
// made, first moves its fields to the operator's apply so that an apply
// prunes as it would have from the start.
package runtimebase

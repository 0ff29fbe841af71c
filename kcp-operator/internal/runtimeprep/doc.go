// Package runtimeprep puts in place what every runtime needs before the
// operator writes anything else there: the Kyma, ModuleTemplate and
// ModuleReleaseMeta CRDs and the runtime namespace. The Kyma, catalog and
// agent controllers call Ensure before their first write into a runtime;
// what a runtime was found to have is remembered with its connection.
package runtimeprep

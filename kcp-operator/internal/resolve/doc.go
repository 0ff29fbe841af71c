// Package resolve finds the ModuleTemplate of each module of a Kyma.
//
// The channel of a module is its own, else the Kyma's, else "regular". A
// module name resolves through its ModuleReleaseMeta (channel -> version ->
// the ModuleTemplate of that module and version). Without a release meta the
// older ways still work: the module-name label or spec.moduleName of a
// template together with the template's own spec.channel, a template's name
// or namespace/name, or the OCM component name of its descriptor. Beta and
// internal modules resolve only for Kymas labelled for them; a restricted
// module (its release meta has spec.kymaSelector) only for the Kymas whose
// labels the selector selects, however it is named. Mandatory modules are
// found separately, for every Kyma — restricted ones for the selected only.
//
// A template without a descriptor (spec.descriptor: {}, as the public
// modulectl writes them) gets the one of its version in the registry, for
// the component its ModuleReleaseMeta names (see WithComponents and package
// componentsource); its signature is checked on that descriptor.
//
// Lookups go through field indexes of the manager's cache (see Indexes), so
// resolving a module costs no API request.
package resolve

// Package catalog syncs the module catalog into a runtime: the
// ModuleTemplates and ModuleReleaseMetas a Kyma may use (not mandatory, not
// excluded by the sync label, beta and internal ones only for Kymas labelled
// for them, restricted ones only for Kymas their kymaSelector selects) are copied into the runtime namespace, and those gone from the
// KCP are removed. The copies are the operator's: a copy that differs from
// the KCP's is replaced whole, edits in the runtime included. A hash per object and one for the whole catalog make an
// unchanged catalog cost no writes, and no requests at all while the runtime
// client lives.
package catalog

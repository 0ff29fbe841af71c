package v1beta2

// Hub marks v1beta2 as the hub of conversion: it is the storage version,
// and every other served version (v1beta1) converts to and from it.
func (*Kyma) Hub() {}

// Hub marks v1beta2 as the hub of conversion (see Kyma.Hub).
func (*ModuleTemplate) Hub() {}

// Hub marks v1beta2 as the hub of conversion (see Kyma.Hub).
func (*Manifest) Hub() {}

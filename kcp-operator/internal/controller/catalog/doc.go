// Package catalog is the catalog controller: for every Kyma it syncs the
// module catalog into the runtime (see internal/catalog) and reports the
// result in the Kyma's ModuleCatalog condition, which the Kyma controller
// counts towards the Kyma's state. With --skr-image-pull-secret it also
// keeps the image pull Secret in the runtime (internal/pullsecret) and
// reports the SKRImagePullSecretSync condition.
package catalog

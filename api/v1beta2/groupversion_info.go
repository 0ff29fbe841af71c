package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is the group and version of every kind in this package.
var GroupVersion = schema.GroupVersion{Group: "operator.kyma-project.io", Version: "v1beta2"}

// Kind names, for code that builds GroupVersionKinds or owner references.
const (
	KymaKind              = "Kyma"
	ManifestKind          = "Manifest"
	ModuleTemplateKind    = "ModuleTemplate"
	ModuleReleaseMetaKind = "ModuleReleaseMeta"
	WatcherKind           = "Watcher"
)

// AddToScheme registers the kinds of this package with a scheme.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion,
		&Kyma{}, &KymaList{},
		&Manifest{}, &ManifestList{},
		&ModuleTemplate{}, &ModuleTemplateList{},
		&ModuleReleaseMeta{}, &ModuleReleaseMetaList{},
		&Watcher{}, &WatcherList{},
	)
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

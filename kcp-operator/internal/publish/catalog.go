package publish

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/render"
)

// templateInput is what a ModuleTemplate says about a module version.
type templateInput struct {
	module, version, namespace string
	mandatory                  bool
	descriptor                 []byte // JSON
	defaultCR                  *unstructured.Unstructured
	manager                    *v1beta2.Manager
	signature                  *SignatureInfo // nil: unsigned
}

// newTemplate builds the ModuleTemplate <module>-<version>.
func newTemplate(in templateInput) (*v1beta2.ModuleTemplate, error) {
	name, err := templateName(in.module, in.version)
	if err != nil {
		return nil, err
	}
	labels := map[string]string{shared.ModuleNameLabel: in.module}
	if in.signature != nil {
		labels[signatureLabel] = in.signature.Name
	}
	return &v1beta2.ModuleTemplate{
		TypeMeta: metav1.TypeMeta{APIVersion: v1beta2.GroupVersion.String(), Kind: v1beta2.ModuleTemplateKind},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: in.namespace,
			Labels: labels,
		},
		Spec: v1beta2.ModuleTemplateSpec{
			ModuleName: in.module,
			Version:    in.version,
			Mandatory:  in.mandatory,
			Data:       in.defaultCR,
			Descriptor: runtime.RawExtension{Raw: in.descriptor},
			Manager:    in.manager,
		},
	}, nil
}

// releaseInput says which version goes where.
type releaseInput struct {
	module, component, version, namespace string
	channels                              []string
	mandatory                             bool
}

// mergeReleaseMeta assigns the version to the channels (or makes it the
// mandatory version) in existing, or in a new ModuleReleaseMeta <module>
// when existing is nil. Other channels keep their versions; a new channel
// is appended. existing is not changed.
func mergeReleaseMeta(existing *v1beta2.ModuleReleaseMeta, in releaseInput) (*v1beta2.ModuleReleaseMeta, error) {
	mrm := &v1beta2.ModuleReleaseMeta{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1beta2.GroupVersion.String(), Kind: v1beta2.ModuleReleaseMetaKind},
		ObjectMeta: metav1.ObjectMeta{Name: in.module, Namespace: in.namespace},
	}
	if existing != nil {
		mrm = existing.DeepCopy()
		switch {
		case mrm.Spec.ModuleName != "" && mrm.Spec.ModuleName != in.module:
			return nil, fmt.Errorf("it is the ModuleReleaseMeta of module %q, not %q", mrm.Spec.ModuleName, in.module)
		case mrm.Spec.OcmComponentName != "" && mrm.Spec.OcmComponentName != in.component:
			return nil, fmt.Errorf("it names the component %q, this module is %q", mrm.Spec.OcmComponentName, in.component)
		case in.mandatory && len(mrm.Spec.Channels) > 0:
			return nil, errors.New("it assigns channels; a mandatory module has none")
		case !in.mandatory && mrm.Spec.Mandatory != nil:
			return nil, errors.New("it makes the module mandatory; a mandatory module has no channels")
		}
	}
	if mrm.Labels == nil {
		mrm.Labels = map[string]string{}
	}
	mrm.Labels[shared.ModuleNameLabel] = in.module
	mrm.Spec.ModuleName, mrm.Spec.OcmComponentName = in.module, in.component
	if in.mandatory {
		mrm.Spec.Mandatory = &v1beta2.Mandatory{Version: in.version}
		return mrm, nil
	}
	for _, c := range in.channels {
		assigned := false
		for i := range mrm.Spec.Channels {
			if mrm.Spec.Channels[i].Channel == c {
				mrm.Spec.Channels[i].Version, assigned = in.version, true
			}
		}
		if !assigned {
			mrm.Spec.Channels = append(mrm.Spec.Channels, v1beta2.ChannelVersionAssignment{Channel: c, Version: in.version})
		}
	}
	return mrm, nil
}

// ReadReleaseMeta reads the ModuleReleaseMeta in a YAML file (the only
// one, among other documents); nil when the file does not exist.
func ReadReleaseMeta(path string) (*v1beta2.ModuleReleaseMeta, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	mrm := &v1beta2.ModuleReleaseMeta{}
	if err := readObject("--release-meta", path, v1beta2.ModuleReleaseMetaKind, mrm); err != nil {
		return nil, err
	}
	return mrm, nil
}

// ReadTemplate reads the ModuleTemplate in a YAML file (the only one,
// among other documents such as the ModuleReleaseMeta publish writes next
// to it).
func ReadTemplate(path string) (*v1beta2.ModuleTemplate, error) {
	t := &v1beta2.ModuleTemplate{}
	if err := readObject("--template", path, v1beta2.ModuleTemplateKind, t); err != nil {
		return nil, err
	}
	return t, nil
}

func readObject(flag, path, kind string, into any) error {
	data, err := readFile(flag, path)
	if err != nil {
		return err
	}
	return decodeObject(flag, path, data, kind, into)
}

// decodeObject decodes the only object of kind in a YAML stream.
func decodeObject(flag, path string, data []byte, kind string, into any) error {
	objs, err := render.ParseManifests(data)
	if err != nil {
		return invalid("%s %s: %w", flag, path, err)
	}
	var found *unstructured.Unstructured
	for _, obj := range objs {
		if obj.GetKind() != kind || obj.GroupVersionKind().Group != v1beta2.GroupVersion.Group {
			continue
		}
		if found != nil {
			return invalid("%s %s: more than one %s (%s and %s)", flag, path, kind, found.GetName(), obj.GetName())
		}
		found = obj
	}
	if found == nil {
		return invalid("%s %s: no %s in the file", flag, path, kind)
	}
	raw, err := found.MarshalJSON()
	if err == nil {
		err = json.Unmarshal(raw, into)
	}
	if err != nil {
		return invalid("%s %s: %s %s: %w", flag, path, kind, found.GetName(), err)
	}
	return nil
}

// EncodeYAML writes objects as a YAML stream ("---" between documents),
// each as Document returns it.
func EncodeYAML(objs ...any) ([]byte, error) {
	var buf bytes.Buffer
	for i, obj := range objs {
		m, err := Document(obj)
		if err != nil {
			return nil, err
		}
		doc, err := yaml.Marshal(m)
		if err != nil {
			return nil, fmt.Errorf("encoding document %d: %w", i+1, err)
		}
		if i > 0 {
			buf.WriteString("---\n")
		}
		buf.Write(doc)
	}
	return buf.Bytes(), nil
}

// Document returns an object (a typed API object, an Unstructured or a
// map) as a map to encode, without the empty creationTimestamp and status
// that Go types add. The object is not changed.
func Document(obj any) (map[string]any, error) {
	var m map[string]any
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		m = o.DeepCopy().Object
	case map[string]any:
		m = runtime.DeepCopyJSON(o)
	default:
		var err error
		if m, err = runtime.DefaultUnstructuredConverter.ToUnstructured(obj); err != nil {
			return nil, fmt.Errorf("encoding %T: %w", obj, err)
		}
	}
	unstructured.RemoveNestedField(m, "metadata", "creationTimestamp")
	if status, ok := m["status"].(map[string]any); ok && len(status) == 0 {
		delete(m, "status")
	}
	return m, nil
}

// WriteFile replaces path with data atomically (a temporary file in the
// same folder, renamed), so that an interrupted write never leaves half a
// ModuleTemplate behind.
func WriteFile(path string, data []byte) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return outputError("writing %s: %w", path, unwrapPathError(err))
	}
	defer func() { _ = os.Remove(tmp.Name()) }() // gone after the rename
	if _, err := tmp.Write(data); err != nil {
		_ = tmp.Close()
		return outputError("writing %s: %w", path, unwrapPathError(err))
	}
	if err := tmp.Chmod(0o644); err != nil {
		_ = tmp.Close()
		return outputError("writing %s: %w", path, unwrapPathError(err))
	}
	if err := tmp.Close(); err != nil {
		return outputError("writing %s: %w", path, unwrapPathError(err))
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return outputError("writing %s: %w", path, unwrapPathError(err))
	}
	return nil
}

// CheckWritable fails when WriteFile could not write path, so that a
// command can refuse before it pushes anything rather than after.
func CheckWritable(path string) error {
	dir := filepath.Dir(path)
	info, err := os.Stat(dir)
	if err != nil {
		return outputError("cannot write %s: %w", path, unwrapPathError(err))
	}
	if !info.IsDir() {
		return outputError("cannot write %s: %s is not a folder", path, dir)
	}
	probe, err := os.CreateTemp(dir, "."+filepath.Base(path)+".probe-")
	if err != nil {
		return outputError("cannot write %s: %w", path, unwrapPathError(err))
	}
	_ = probe.Close()
	_ = os.Remove(probe.Name()) // an empty probe
	return nil
}

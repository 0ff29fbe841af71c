package render

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// imageRef is an image reference split into repository, tag and digest.
type imageRef struct {
	repository string // registry host and path, e.g. europe-docker.pkg.dev/kyma-project/prod/keda-manager
	tag        string
	digest     string
}

func parseImage(s string) imageRef {
	var r imageRef
	s, r.digest, _ = strings.Cut(s, "@")
	if colon := strings.LastIndex(s, ":"); colon > strings.LastIndex(s, "/") {
		s, r.tag = s[:colon], s[colon+1:]
	}
	r.repository = s
	return r
}

func (r imageRef) String() string {
	s := r.repository
	if r.tag != "" {
		s += ":" + r.tag
	}
	if r.digest != "" {
		s += "@" + r.digest
	}
	return s
}

// segments are the repository's path segments, registry host included.
func (r imageRef) segments() []string { return strings.Split(r.repository, "/") }

// imageRewriter replaces images by localized ones.
//
// An image matches a localized image when the last path segments of their
// repositories (the image names, e.g. "keda-manager") are equal; tag and
// digest do not matter. When several localized images match, the one that
// shares the most trailing path segments with the image wins (so
// "mirror/kyma/keda-manager" beats "mirror/other/keda-manager" for
// ".../kyma/keda-manager"); of equally good ones the first listed wins.
// The image is replaced by the whole localized reference; a localized image
// without tag and digest keeps the original's tag and digest.
type imageRewriter struct {
	localized []imageRef
}

func newImageRewriter(images []string) (*imageRewriter, error) {
	if len(images) == 0 {
		return nil, nil
	}
	rw := &imageRewriter{}
	for _, img := range images {
		ref := parseImage(img)
		if ref.repository == "" || strings.HasSuffix(ref.repository, "/") || strings.ContainsAny(img, " \t\n") {
			return nil, fmt.Errorf("localized image %q is not an image reference", img)
		}
		rw.localized = append(rw.localized, ref)
	}
	return rw, nil
}

// rewrite returns the image to use instead of image, and whether it differs.
func (rw *imageRewriter) rewrite(image string) (string, bool) {
	orig := parseImage(image)
	segs := orig.segments()
	best, bestScore := -1, 0
	for i, l := range rw.localized {
		score := sharedSuffix(segs, l.segments())
		if score > bestScore {
			best, bestScore = i, score
		}
	}
	if best < 0 {
		return image, false
	}
	repl := rw.localized[best]
	if repl.tag == "" && repl.digest == "" {
		repl.tag, repl.digest = orig.tag, orig.digest
	}
	out := repl.String()
	return out, out != image
}

func sharedSuffix(a, b []string) int {
	n := 0
	for n < len(a) && n < len(b) && a[len(a)-1-n] == b[len(b)-1-n] {
		n++
	}
	return n
}

// podSpecPaths say where the pod spec of each workload kind is.
var podSpecPaths = map[schema.GroupKind][]string{
	{Kind: "Pod"}:                        {"spec"},
	{Kind: "PodTemplate"}:                {"template", "spec"},
	{Kind: "ReplicationController"}:      {"spec", "template", "spec"},
	{Group: "apps", Kind: "Deployment"}:  {"spec", "template", "spec"},
	{Group: "apps", Kind: "StatefulSet"}: {"spec", "template", "spec"},
	{Group: "apps", Kind: "DaemonSet"}:   {"spec", "template", "spec"},
	{Group: "apps", Kind: "ReplicaSet"}:  {"spec", "template", "spec"},
	{Group: "batch", Kind: "Job"}:        {"spec", "template", "spec"},
	{Group: "batch", Kind: "CronJob"}:    {"spec", "jobTemplate", "spec", "template", "spec"},
}

// rewriteObject replaces the images of the containers, init containers and
// ephemeral containers of a workload. Images elsewhere (custom resources,
// environment variables, arguments) are left alone.
func (rw *imageRewriter) rewriteObject(obj *unstructured.Unstructured) {
	if rw == nil {
		return
	}
	fields, ok := podSpecPaths[obj.GroupVersionKind().GroupKind()]
	if !ok {
		return
	}
	spec := nestedMap(obj.Object, fields...)
	if spec == nil {
		return
	}
	for _, list := range []string{"containers", "initContainers", "ephemeralContainers"} {
		containers, _ := spec[list].([]any)
		for _, c := range containers {
			container, _ := c.(map[string]any)
			image, _ := container["image"].(string)
			if image == "" {
				continue
			}
			if replaced, changed := rw.rewrite(image); changed {
				container["image"] = replaced
			}
		}
	}
}

// nestedMap walks maps without copying, unlike unstructured.NestedMap,
// because the rewrite changes them in place.
func nestedMap(m map[string]any, fields ...string) map[string]any {
	for _, f := range fields {
		next, ok := m[f].(map[string]any)
		if !ok {
			return nil
		}
		m = next
	}
	return m
}

// Package render turns a module's install layer into the Kubernetes objects
// the Manifest controller applies, and modulectl verifies. It needs no
// cluster and no controller-runtime.
//
// # Inputs
//
// A Request names the module, the runtime namespace, the layer Type and the
// layers. Layers are given by digest with their data, or with a Load
// function that is called only when the render is not cached, so that an
// unchanged Manifest reads no layer at all.
//
// Raw manifests (Type RawManifest) are a multi-document YAML (or JSON)
// stream, a tar of .yaml/.yml/.json files, or either gzip-compressed; the
// format is recognised from the content, because a Manifest's ImageSpec does
// not carry a media type. The media types modulectl writes into descriptors
// are MediaTypeYAML for a single file and MediaTypeTar for a folder packed
// with TarManifests (reproducible: name order, fixed times). In a tar, files
// are read in name order; directories, other extensions and hidden files
// are skipped. "kind: List" documents are expanded. Size limits:
// MaxManifestBytes uncompressed, MaxManifestFiles files.
//
// Helm charts (Type HelmChart) are the chart's .tgz (MediaTypeHelmChart),
// rendered with Helm's own loader and engine like `helm template`, with no
// cluster access (lookup finds nothing): values are the chart's defaults,
// under the config layer's values (a YAML map), under Request.Values; the
// release is Request.ReleaseName (default: the module) in Request.Namespace,
// an install (IsInstall true, revision 1); .Capabilities.KubeVersion is
// Request.KubeVersion (default DefaultKubeVersion), and a chart whose
// kubeVersion excludes it fails. values.schema.json is enforced; subcharts
// are enabled by their conditions and tags. CRDs in crds/ (of the chart and
// its enabled subcharts) come first and are not templated. No hook runs,
// because there is no release: a hook object for an install or upgrade event
// (pre-/post-install, pre-/post-upgrade) is kept as an ordinary resource,
// applied once and kept, annotations and all; hooks only for test, delete or
// rollback are dropped. NOTES.txt is ignored. Templates that produce random
// values (passwords, certificates) produce new ones on every cold render;
// the render cache keeps them stable while the entry lives.
//
// # Transforms
//
// Every object gets the labels operator.kyma-project.io/managed-by:
// lifecycle-manager and operator.kyma-project.io/module-name: <module>
// (other labels stay). A namespaced object without a namespace gets
// Request.Namespace; a cluster-scoped object loses a namespace it names
// (charts often template one onto everything). Which kinds are namespaced
// is decided by the CRDs of the same render, else by the caller's
// ScopeFunc, typically the runtime's REST mapper (BuiltinScope knows
// Kubernetes' own kinds, for modulectl). A ScopeFunc error fails the render
// and is wrapped, so a caller can recognise "no kind match".
//
// Request.LocalizedImages are full image references that replace the images
// of containers, init containers and ephemeral containers of Pods,
// Deployments, StatefulSets, DaemonSets, ReplicaSets, Jobs, CronJobs,
// ReplicationControllers and PodTemplates. An image matches a localized
// image when the last path segments of their repositories are equal
// ("…/prod/keda-manager:1.6.0" and "mirror.example.com/keda-manager:1.6.0"),
// whole segments only, tags and digests aside. Of several matches, the one
// sharing the most trailing path segments wins, then the first listed. The
// image becomes the localized reference; a localized reference without tag
// and digest keeps the original's. Images in custom resources, environment
// variables or arguments are not touched.
//
// Objects are returned sorted for apply (SortForApply): CRDs, then
// namespaces, then other cluster-scoped objects, then namespaced ones, in
// their rendered order within each group. DefinedKinds tells which kinds
// the CRDs among them define (and IsCRD which objects are CRDs), for
// default CRs and deletion. The same object twice is an error.
//
// # Limits
//
// A module is untrusted input, and one render must not take the operator's
// time or memory from every other module. Options.Limits bound each render
// (layer downloads aside): its time (Timeout), its YAML (MaxBytes: raw
// manifests uncompressed, a chart's rendered templates and CRDs) and its
// objects (MaxObjects, counted while parsing). Options.Concurrency renders
// run at once. Helm's template engine has no context and builds its output
// in buffers of its own, so a chart that loops cannot be stopped in
// process: it is abandoned at the deadline and keeps its slot until it
// really ends. With Options.Isolate, charts render in a child process (this
// binary again, recognised in this package's init before main runs, so test
// binaries work too) that is killed at the deadline and ends itself when
// its heap passes MaxHeap(MaxBytes); the parent reads at most MaxBytes of
// its answer. Request.Trusted charts (the operator's own) render in process.
// A render over a bound fails with a *LimitError naming the bound, and is
// remembered for FailureTTL: the same inputs render the same, so asking
// again returns the error at once.
//
// # Errors
//
// Problems with the content are *DocumentError values naming the file (in a
// tar or chart), the 1-based document and the object when known, e.g.
// "templates/deployment.yaml, document 2 (Deployment kyma-system/keda):
// metadata.name is missing". Loader errors are wrapped as returned.
//
// # The render cache
//
// Renderer caches results by a hash of everything that changes the output:
// type, install and config digests, values, module, namespace, release
// name, Kubernetes version and localized images (values, config and release
// only for Helm), plus a version of this package's output. It is bounded by
// entries and by approximate bytes (the objects as JSON), least recently
// used out first; failed renders are not cached (renders over a bound are
// remembered apart, see Limits); concurrent renders of one
// key render once, with the first caller's context (if it ends, the others
// get its error and succeed on their next attempt). A hit returns deep copies, which callers may change. The
// ScopeFunc is not part of the key: a kind's scope is the same in every
// runtime.
package render

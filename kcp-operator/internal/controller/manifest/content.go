package manifest

import (
	"errors"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/oci"
	"github.com/lifecycle-manager/kcp-operator/internal/render"
)

// Reasons of the Resources condition for a module that is not applied
// because of what it renders.
const (
	// ReasonRenderLimit: the render went over a bound (its time, YAML bytes
	// or objects, or the render child's heap); the message names it.
	ReasonRenderLimit = "RenderLimitExceeded"
	// ReasonContentDenied: a rendered object is denied by --module-denied-kinds;
	// the message names the object and the rule. Nothing is applied. The
	// ModuleCR condition has it for a default CR the policy denies.
	ReasonContentDenied = "ContentDenied"
)

// ReasonConfigIgnored is the Warning Event's reason when a Manifest of a
// raw-manifest module carries a config layer (Helm values): it is
// installed without it, and each apply says so.
const ReasonConfigIgnored = "ConfigIgnored"

// ReasonControlPlaneTarget is the Installation condition's reason for a
// Manifest with spec.remote: false, which is not installed.
const ReasonControlPlaneTarget = "ControlPlaneTargetUnsupported"

var errControlPlaneTarget = errors.New("spec.remote: false (install into the control plane) is not supported: " +
	"modules are installed only into runtimes, because the operator's control-plane credentials must not apply module content; " +
	"give the control plane an access Secret like any runtime, or run the operator with --feature-gates=SingleCluster=true")

// renderReason is the condition reason of a failed render.
func renderReason(err error) string {
	var limit *render.LimitError
	if errors.As(err, &limit) {
		return ReasonRenderLimit
	}
	if reason := oci.Reason(err); reason != "" {
		return reason
	}
	return "RenderFailed"
}

// moduleName is the module a Manifest installs, as its render names it.
func moduleName(mf *v1beta2.Manifest) string {
	if name := mf.Labels[shared.ModuleNameLabel]; name != "" {
		return name
	}
	return mf.Name
}

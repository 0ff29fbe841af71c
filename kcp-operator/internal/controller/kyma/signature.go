package kyma

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/lifecycle-manager/api/v1beta2"
)

// ConditionModuleSignatures reports on the signatures of the Kyma's
// modules while its signature policy checks them (warn or enforce): True
// when every module's signature verified, False with ReasonSignatureWarning
// while a module is installed unverified under warn, which makes the Kyma
// Warning. A module refused under enforce is an Error module instead.
// Without checks (policy off) the condition is absent.
const ConditionModuleSignatures = "ModuleSignatures"

// ReasonSignatureWarning is the reason of the condition and of the Warning
// Event of a module installed although its signature is missing or does
// not verify.
const ReasonSignatureWarning = "SignatureWarning"

// signatureCondition sets ConditionModuleSignatures from the verdicts of
// the resolved modules, and sends one Warning Event per module that is
// newly unverified.
func (r *Reconciler) signatureCondition(kyma *v1beta2.Kyma, status *v1beta2.KymaStatus, results []moduleResult) {
	checked := false
	var warnings []string
	for _, res := range results {
		if res.err != nil || res.resolved == nil || !res.resolved.Signature.Checked() {
			continue
		}
		checked = true
		if w := res.resolved.Signature.Warning; w != "" {
			warnings = append(warnings, fmt.Sprintf("module %s: %s", res.listed.Name, w))
		}
	}
	if !checked {
		meta.RemoveStatusCondition(&status.Conditions, ConditionModuleSignatures)
		return
	}
	if len(warnings) == 0 {
		setCondition(status, kyma.Generation, ConditionModuleSignatures, true, "Verified", "the signatures of all modules are verified")
		return
	}
	previous := ""
	if c := meta.FindStatusCondition(kyma.Status.Conditions, ConditionModuleSignatures); c != nil {
		previous = c.Message
	}
	for _, w := range warnings {
		// Once per module and cause, not per reconcile: the condition says it meanwhile.
		if !strings.Contains(previous, w) {
			r.Events.Eventf(kyma, nil, corev1.EventTypeWarning, ReasonSignatureWarning, "VerifyModule",
				"%s; installed anyway under the signature policy warn", w)
		}
	}
	setCondition(status, kyma.Generation, ConditionModuleSignatures, false, ReasonSignatureWarning,
		"installed unverified: "+strings.Join(warnings, "; "))
}

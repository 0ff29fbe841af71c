package kyma

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/resolve"
)

// ConditionModuleDescriptors reports on the descriptors read from the
// registry for templates that embed none (spec.descriptor: {}): True when
// every such module's descriptor was read; False, with the reason of the
// first failure (componentsource: DescriptorRegistryNotConfigured,
// ComponentNameMissing, ComponentNotFound, ComponentVersionNotFound,
// RegistryUnreachable, ...), when one was not — that module is Error and
// its status says why. Absent when no module needs the registry.
const ConditionModuleDescriptors = "ModuleDescriptors"

// descriptorCondition sets ConditionModuleDescriptors from the results.
func descriptorCondition(kyma *v1beta2.Kyma, status *v1beta2.KymaStatus, results []moduleResult) {
	fetched, reason := 0, ""
	var failures []string
	for _, res := range results {
		var rerr *resolve.Error
		switch {
		case errors.As(res.err, &rerr) && rerr.Code != "":
			if reason == "" {
				reason = rerr.Code
			}
			failures = append(failures, fmt.Sprintf("%s (%s)", rerr.Error(), rerr.Code))
		case res.err == nil && res.resolved != nil && res.resolved.Document != nil:
			fetched++
		}
	}
	switch {
	case len(failures) > 0:
		setCondition(status, kyma.Generation, ConditionModuleDescriptors, false, reason,
			"descriptors not read from the registry: "+strings.Join(failures, "; "))
	case fetched > 0:
		setCondition(status, kyma.Generation, ConditionModuleDescriptors, true, "Fetched",
			fmt.Sprintf("the descriptors of %d modules were read from the registry", fetched))
	default:
		meta.RemoveStatusCondition(&status.Conditions, ConditionModuleDescriptors)
	}
}

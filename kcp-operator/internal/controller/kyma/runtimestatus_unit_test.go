package kyma

import (
	"errors"
	"fmt"
	"net/url"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
)

func TestForRuntimeDropsKCPNames(t *testing.T) {
	ref := func(kind, ns string) *v1beta2.TrackingObject {
		o := &v1beta2.TrackingObject{PartialMeta: v1beta2.PartialMeta{Name: "x", Namespace: ns, Generation: 3}}
		o.Kind = kind
		return o
	}
	kcp := v1beta2.KymaStatus{State: shared.StateReady, Modules: []v1beta2.ModuleStatus{
		{Name: "a", State: shared.StateReady, Version: "1.0.0", Channel: "fast", FQDN: "c/a", Maintenance: true, Message: "m",
			Manifest: ref("Manifest", "kcp-system"), Template: ref("ModuleTemplate", "kcp-system"), Resource: ref("A", "")},
		{Name: "b", State: shared.StateError, Message: "no template"},
	}}
	got := forRuntime(kcp, "kyma-system")

	assert.Equal(t, v1beta2.ModuleStatus{Name: "a", State: shared.StateReady, Version: "1.0.0", Channel: "fast", FQDN: "c/a",
		Maintenance: true, Message: "m", Template: ref("ModuleTemplate", "kyma-system"), Resource: ref("A", "")}, got.Modules[0])
	assert.Equal(t, kcp.Modules[1], got.Modules[1], "a module without references stays as it is")
	assert.Equal(t, "kcp-system", kcp.Modules[0].Template.Namespace, "the KCP status is not changed")
	assert.NotNil(t, kcp.Modules[0].Manifest)
}

func TestAnsweredTellsRefusalsFromSilence(t *testing.T) {
	gr := schema.GroupResource{Group: v1beta2.GroupVersion.Group, Resource: "kymas"}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"none", nil, false},
		{"forbidden", fmt.Errorf("writing: %w", apierrors.NewForbidden(gr, "default", errors.New("no"))), true},
		{"server timeout", apierrors.NewServerTimeout(gr, "patch", 1), true},
		{"connection refused", &url.Error{Op: "Get", URL: "https://127.0.0.1:1", Err: syscall.ECONNREFUSED}, false},
	} {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, answered(tc.err)) })
	}
}

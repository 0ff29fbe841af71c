// Package suite is the two-cluster end-to-end suite: the scenarios users
// rely on, against the built kcp-operator and skr-agent binaries running as
// processes with mTLS between them (see e2e/harness). `make e2e` runs it.
package suite

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/e2e/harness"
)

var h *harness.Harness

const (
	timeout = 90 * time.Second
	tick    = 100 * time.Millisecond
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx := context.Background()
	var err error
	h, err = harness.New(ctx, harness.Options{Runtimes: 2, Progress: func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "harness: "+format+"\n", args...)
	}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e harness:", err)
		if h != nil {
			fmt.Fprintln(os.Stderr, h.Logs())
		}
		return 1
	}
	defer h.Close()
	prom = startMonitoring(ctx, h)
	defer func() { _ = prom.server.Stop() }()
	code := m.Run()
	refused := refusedRequests()
	if code != 0 || refused != "" {
		fmt.Fprintln(os.Stderr, "--- process logs (all kept in", h.RunDir, ")", h.Logs())
	}
	if refused != "" {
		// Last, so that it is what the end of the output shows.
		fmt.Fprintln(os.Stderr, refused)
		code = 1
	}
	return code
}

// refusedRequests reports, as a failure message, every request of the
// operator that an API server refused: the charts' RBAC lacks a permission
// the operator uses, which fails the suite even if every scenario passed
// (see harness/audit.go). It is empty when nothing was refused.
func refusedRequests() string {
	refused, err := h.RefusedRequests()
	if err != nil {
		return "FAIL: reading the API servers' audit logs: " + err.Error()
	}
	if len(refused) == 0 {
		return ""
	}
	return fmt.Sprintf("FAIL: the API servers refused %d request(s) of the operator; "+
		"fix charts/kcp-operator/templates/rbac.yaml (KCP) or charts/kcp-operator-runtime (runtimes):\n  %s",
		len(refused), strings.Join(refused, "\n  "))
}

// step logs a Given/When/Then line of a scenario.
func step(t *testing.T, format string, args ...any) {
	t.Helper()
	t.Logf(format, args...)
}

func kyma(t *testing.T, rt *harness.Runtime) *v1beta2.Kyma {
	t.Helper()
	k := &v1beta2.Kyma{}
	require.NoError(t, h.KCP.Client.Get(t.Context(), client.ObjectKey{Namespace: harness.Namespace, Name: rt.KymaName}, k))
	return k
}

// eventuallyKyma waits until check holds for the runtime's KCP Kyma.
func eventuallyKyma(t *testing.T, rt *harness.Runtime, what string, check func(*v1beta2.Kyma) bool) *v1beta2.Kyma {
	t.Helper()
	var last *v1beta2.Kyma
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		k := &v1beta2.Kyma{}
		if h.KCP.Client.Get(t.Context(), client.ObjectKey{Namespace: harness.Namespace, Name: rt.KymaName}, k) == nil {
			last = k
			if check(k) {
				return k
			}
		}
		time.Sleep(tick)
	}
	state, op, modules := "", "", ""
	if last != nil {
		state, op = string(last.Status.State), last.Status.LastOperation.Operation
		for _, m := range last.Status.Modules {
			modules += fmt.Sprintf("\n\t%s: %s: %s", m.Name, m.State, m.Message)
		}
	}
	require.FailNowf(t, "timed out", "Kyma %s never reached %s (state %q, last operation %q); its modules:%s", rt.KymaName, what, state, op, modules)
	return nil
}

func ready(k *v1beta2.Kyma) bool { return k.Status.State == shared.StateReady }

func pushReady(k *v1beta2.Kyma) bool {
	return meta.IsStatusConditionTrue(k.Status.Conditions, v1beta2.ConditionSKRWebhook)
}

// updateRuntimeKyma edits the runtime Kyma as a runtime admin would,
// retrying on conflicts with the operator's status writes.
func updateRuntimeKyma(t *testing.T, rt *harness.Runtime, mutate func(*v1beta2.Kyma)) time.Time {
	t.Helper()
	var written time.Time
	require.Eventually(t, func() bool {
		k := &v1beta2.Kyma{}
		if rt.Client.Get(t.Context(), client.ObjectKey{Namespace: shared.DefaultRuntimeNamespace, Name: shared.DefaultRuntimeKymaName}, k) != nil {
			return false
		}
		mutate(k)
		written = time.Now()
		return rt.Client.Update(t.Context(), k) == nil
	}, timeout, tick, "editing the runtime Kyma of %s", rt.Name)
	return written
}

// updateKyma edits the KCP Kyma, retrying on conflicts.
func updateKyma(t *testing.T, rt *harness.Runtime, mutate func(*v1beta2.Kyma)) {
	t.Helper()
	require.Eventually(t, func() bool {
		k := kyma(t, rt)
		mutate(k)
		return h.KCP.Client.Update(t.Context(), k) == nil
	}, timeout, tick)
}

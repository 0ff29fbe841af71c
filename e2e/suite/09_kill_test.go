package suite

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/certs/pki"
	"github.com/lifecycle-manager/e2e/harness"
)

// The kill scenario's channels and versions: what it publishes goes
// nowhere else. killNew adds the ConfigMap of 2.0.0, so the upgrade
// applies an object the install did not have.
const (
	killOldChannel, killOldVersion = "killold", "3.0.0"
	killNewChannel, killNewVersion = "killnew", "3.1.0"
	// minKills is the least number of SIGKILLs the scenario deals.
	minKills = 20
	// killSeedEnv replays a schedule: the seed is logged at the start.
	killSeedEnv = "E2E_KILL_SEED"
)

// killTimeout bounds each step while the operator is being killed: it
// loses its work in progress every few seconds.
const killTimeout = 3 * time.Minute

// TestTheOperatorKilledAtRandomLosesNothing SIGKILLs the operator at
// random moments while modules are installed, upgraded and removed, a
// Kyma is deleted and the CA rotated, starting it again each time. The
// operator's state lives in the API servers only; whatever a kill
// interrupts, the next process must finish it, and only it.
func TestTheOperatorKilledAtRandomLosesNothing(t *testing.T) {
	if !h.Local {
		t.Skip("clusters mode: killing the operator needs the local harness's process")
	}
	a, b := runtime(0), runtime(1)
	seed := killSeed(t)
	step(t, "Given two runtimes without modules, seed %d (%s=%d replays the kills)", seed, killSeedEnv, seed)
	require.NoError(t, h.PublishFrom(t.Context(), killOldVersion, killOldChannel, "1.0.0"))
	require.NoError(t, h.PublishFrom(t.Context(), killNewVersion, killNewChannel, "2.0.0"))
	withoutModules(t, a)
	withoutModules(t, b)
	step(t, "And a user's namespace, ConfigMap, CRD and CR in each runtime")
	users := map[string]userObjects{a.Name: createUserObjects(t, a), b.Name: createUserObjects(t, b)}
	casBefore := bundleCAs(t)

	step(t, "When the operator is SIGKILLed at random moments (at least %d times) during it all", minKills)
	killer, err := h.StartKiller(t.Context(), seed, 200*time.Millisecond, 4*time.Second, t.Logf)
	require.NoError(t, err)
	defer func() { _ = killer.Stop(context.WithoutCancel(t.Context())) }() // the next scenarios need an operator
	start := time.Now()
	request := killAcrossEverything(t, killer, a, b)
	for round := 1; killer.Count() < minKills; round++ {
		killAcrossAModule(t, killer, a, round)
	}
	require.NoError(t, killer.Stop(t.Context()), "the operator starts again after the last kill")
	kills := killer.Kills()
	t.Logf("%d kills in %v", len(kills), time.Since(start).Round(time.Second))
	require.GreaterOrEqual(t, len(kills), minKills)

	step(t, "Then every Kyma converges: %s Ready without modules, %s created again Ready with its agent", a.Name, b.Name)
	awaitNoModules(t, a)
	ensureKyma(t, b)
	awaitNoModules(t, b)

	step(t, "And no object of the removed module is left in either runtime")
	for _, rt := range []*harness.Runtime{a, b} {
		assert.Empty(t, moduleObjects(t, rt, harness.SampleModule), "%s: objects labelled %s=%s",
			rt.Name, shared.ModuleNameLabel, harness.SampleModule)
	}

	step(t, "And the user's namespaces, ConfigMaps, CRDs and CRs are all still there, untouched")
	for _, rt := range []*harness.Runtime{a, b} {
		users[rt.Name].assertIntact(t, rt)
	}

	step(t, "And the CA was rotated exactly once")
	awaitRotationHandled(t, request)
	casAfter := bundleCAs(t)
	assert.Len(t, casAfter, len(casBefore)+1, "one new CA in the trust bundle (before: %v, after: %v)",
		caNames(casBefore), caNames(casAfter))
}

// killAcrossEverything installs and upgrades the module in both runtimes,
// requests a CA rotation, removes the module from a and deletes b's Kyma,
// all while killer kills; it returns the rotation request.
func killAcrossEverything(t *testing.T, killer *harness.Killer, a, b *harness.Runtime) string {
	t.Helper()
	both := []*harness.Runtime{a, b}
	during(killer, "install")
	for _, rt := range both {
		updateRuntimeKyma(t, rt, withSample(killOldChannel))
	}
	for _, rt := range both {
		awaitModule(t, rt, killOldVersion)
	}

	during(killer, "upgrade")
	for _, rt := range both {
		updateRuntimeKyma(t, rt, withSample(killNewChannel))
	}
	for _, rt := range both {
		awaitModule(t, rt, killNewVersion)
		require.True(t, sampleSettingsExist(t, rt), "%s: the upgrade applied the new ConfigMap", rt.Name)
	}
	// The orphan check at the end sees the module's objects while they are there.
	require.NotEmpty(t, moduleObjects(t, a, harness.SampleModule), "objects labelled with the installed module")

	// The rotation runs on while the module is removed and the Kyma deleted.
	during(killer, "CA rotation, module removal")
	request := requestRotation(t)
	updateRuntimeKyma(t, a, withoutAny)
	awaitNoModules(t, a)

	during(killer, "CA rotation, Kyma deletion")
	require.NoError(t, h.KCP.Client.Delete(t.Context(), kyma(t, b)))
	require.Eventually(t, func() bool {
		err := h.KCP.Client.Get(t.Context(), client.ObjectKey{Namespace: harness.Namespace, Name: b.KymaName}, &v1beta2.Kyma{})
		return apierrors.IsNotFound(err)
	}, killTimeout, tick, "the deleted Kyma %s goes", b.KymaName)
	return request
}

// killAcrossAModule installs, upgrades and removes the module in rt while
// killer kills: the scenario's rounds until it has killed often enough.
func killAcrossAModule(t *testing.T, killer *harness.Killer, rt *harness.Runtime, round int) {
	t.Helper()
	during(killer, fmt.Sprintf("install, round %d", round))
	updateRuntimeKyma(t, rt, withSample(killOldChannel))
	awaitModule(t, rt, killOldVersion)
	during(killer, fmt.Sprintf("upgrade, round %d", round))
	updateRuntimeKyma(t, rt, withSample(killNewChannel))
	awaitModule(t, rt, killNewVersion)
	during(killer, fmt.Sprintf("module removal, round %d", round))
	updateRuntimeKyma(t, rt, withoutAny)
	awaitNoModules(t, rt)
}

// during names the step the scenario begins and has the next kill land
// within moments, while the step is in progress.
func during(killer *harness.Killer, phase string) {
	killer.SetPhase(phase)
	killer.KillSoon(2 * time.Second)
}

// withoutAny removes every module from the Kyma.
func withoutAny(k *v1beta2.Kyma) { k.Spec.Modules = nil }

// withSample lists the sample module from channel as the Kyma's only module.
func withSample(channel string) func(*v1beta2.Kyma) {
	return func(k *v1beta2.Kyma) {
		k.Spec.Modules = []v1beta2.Module{{Name: harness.SampleModule, Channel: channel}}
	}
}

// killSeed is the seed of the kill schedule: from killSeedEnv, else new.
func killSeed(t *testing.T) uint64 {
	t.Helper()
	if v := os.Getenv(killSeedEnv); v != "" {
		seed, err := strconv.ParseUint(v, 10, 64)
		require.NoError(t, err, "%s", killSeedEnv)
		return seed
	}
	return uint64(time.Now().UnixNano())
}

// awaitModule waits until the runtime's Kyma is Ready with the sample
// module Ready at version.
func awaitModule(t *testing.T, rt *harness.Runtime, version string) {
	t.Helper()
	awaitKyma(t, rt, "sample "+version+" Ready", func(k *v1beta2.Kyma) bool {
		m := k.Status.Modules
		return ready(k) && len(m) == 1 && m[0].Version == version && m[0].State == shared.StateReady
	})
	_, err := deployment(t, rt, harness.SampleDeployment)
	require.NoError(t, err, "%s: the module's Deployment", rt.Name)
}

// awaitNoModules waits until the runtime's Kyma is Ready without modules.
func awaitNoModules(t *testing.T, rt *harness.Runtime) {
	t.Helper()
	awaitKyma(t, rt, "Ready without modules", func(k *v1beta2.Kyma) bool {
		return ready(k) && pushReady(k) && len(k.Spec.Modules) == 0 && len(k.Status.Modules) == 0
	})
}

// awaitKyma is eventuallyKyma with the longer bound of a killed operator.
func awaitKyma(t *testing.T, rt *harness.Runtime, what string, check func(*v1beta2.Kyma) bool) {
	t.Helper()
	var last v1beta2.Kyma
	ok := assert.Eventually(t, func() bool {
		k := &v1beta2.Kyma{}
		if h.KCP.Client.Get(t.Context(), client.ObjectKey{Namespace: harness.Namespace, Name: rt.KymaName}, k) != nil {
			return false
		}
		last = *k
		return check(k)
	}, killTimeout, tick, "Kyma %s reaches %s", rt.KymaName, what)
	if !ok {
		require.FailNowf(t, "timed out", "Kyma %s: state %q, last operation %q, modules %+v", rt.KymaName,
			last.Status.State, last.Status.LastOperation.Operation, last.Status.Modules)
	}
}

// requestRotation asks for a CA rotation and returns the request's value.
func requestRotation(t *testing.T) string {
	t.Helper()
	request := "kill-" + time.Now().UTC().Format(time.RFC3339Nano)
	require.Eventually(t, func() bool {
		bundle := &corev1.Secret{}
		if h.KCP.Client.Get(t.Context(), bundleKey, bundle) != nil {
			return false
		}
		if bundle.Annotations == nil {
			bundle.Annotations = map[string]string{}
		}
		bundle.Annotations[shared.RotateCAAnnotation] = request
		return h.KCP.Client.Update(t.Context(), bundle) == nil
	}, timeout, tick, "requesting a CA rotation")
	return request
}

var bundleKey = client.ObjectKey{Namespace: harness.Namespace, Name: "lifecycle-manager-ca-bundle"}

// awaitRotationHandled waits until the operator recorded the request as
// handled: a process killed after it rotated and before it recorded that
// rotates again first, so the bundle shows a second rotation by then.
func awaitRotationHandled(t *testing.T, request string) {
	t.Helper()
	require.Eventually(t, func() bool {
		bundle := &corev1.Secret{}
		return h.KCP.Client.Get(t.Context(), bundleKey, bundle) == nil &&
			bundle.Annotations[shared.CARotatedForAnnotation] == request
	}, killTimeout, tick, "the rotation request is recorded as handled")
}

// bundleCAs are the CAs in the trust bundle.
func bundleCAs(t *testing.T) [][]byte {
	t.Helper()
	bundle := &corev1.Secret{}
	require.NoError(t, h.KCP.Client.Get(t.Context(), bundleKey, bundle))
	certs, err := pki.ParseCerts(bundle.Data["ca.crt"])
	require.NoError(t, err)
	out := make([][]byte, 0, len(certs))
	for _, c := range certs {
		out = append(out, c.SubjectKeyId)
	}
	return out
}

func caNames(ids [][]byte) []string {
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		out = append(out, fmt.Sprintf("%x", id))
	}
	return out
}

package suite

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/e2e/harness"
)

// runtimeDeletes are the DELETE requests of a ServiceAccount (the
// operator's) in the runtimes' audit logs for the scenario's module
// objects, runtime Kymas and runtime namespaces.
func (sc *shardScenario) runtimeDeletes(t *testing.T) []string {
	t.Helper()
	namespaces := map[string]bool{}
	for _, k := range sc.s.Kymas {
		namespaces[k.Namespace] = true
	}
	watched := map[string]string{"deployments": harness.ShardModuleDeployment, "configmaps": harness.ShardModuleConfigMap,
		"kymas": shared.DefaultRuntimeKymaName}
	var out []string
	for _, rt := range h.Runtimes {
		writes, err := h.Writes(rt.Name)
		require.NoError(t, err)
		for _, w := range writes {
			if !strings.HasPrefix(w.Verb, "delete") {
				continue
			}
			module := namespaces[w.Namespace] && (watched[w.Resource] == w.Name || w.Name == "")
			if module || (w.Resource == "namespaces" && namespaces[w.Name]) {
				out = append(out, rt.Name+": "+w.String())
			}
		}
	}
	return out
}

// kcpWrites are the shards' writes of Kymas and Manifests in the KCP.
func (sc *shardScenario) kcpWrites(t *testing.T) []harness.Write {
	t.Helper()
	writes, err := h.Writes("kcp")
	require.NoError(t, err)
	var out []harness.Write
	for _, w := range writes {
		if w.Namespace == harness.ShardNamespace && sc.s.ByUser(w.User) != nil && (w.Resource == "kymas" || w.Resource == "manifests") {
			if w.Name == "" { // a create names the object in its body
				var meta struct {
					Metadata struct {
						Name string `json:"name"`
					} `json:"metadata"`
				}
				_ = json.Unmarshal(w.Body, &meta)
				w.Name = meta.Metadata.Name
			}
			out = append(out, w)
		}
	}
	return out
}

func (sc *shardScenario) kcpDeletes(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, w := range sc.kcpWrites(t) {
		if strings.HasPrefix(w.Verb, "delete") {
			out = append(out, w.String())
		}
	}
	return out
}

// ownerRuns groups, per Kyma, the shards' writes of the Kyma and its
// Manifests into runs of one shard. The coordinator's writes that only
// (re)assign a Kyma — its shard label and shard-assigned annotation — are
// left out: they are its job for every Kyma, whoever owns it.
func (sc *shardScenario) ownerRuns(t *testing.T) map[string][]harness.OwnerRun {
	t.Helper()
	var mfs v1beta2.ManifestList
	require.NoError(t, h.KCP.Client.List(t.Context(), &mfs, client.InNamespace(harness.ShardNamespace)))
	kymaOf := map[string]string{}
	for _, mf := range mfs.Items {
		kymaOf["manifests/"+mf.Name] = mf.Labels[shared.KymaNameLabel]
	}
	// The first shard of the list; the scenario never changes it.
	coordinator := sc.s.All[0].User
	byKyma := map[string][]harness.Write{}
	assignments := 0
	for _, w := range sc.kcpWrites(t) {
		if w.Resource == "kymas" && w.Subresource == "" && w.User == coordinator &&
			harness.OnlyTouches(w.Body, []string{harness.ShardLabel}, []string{harness.ShardAssignedAnnotation}) {
			assignments++
			continue
		}
		kyma := w.Name
		if w.Resource == "manifests" {
			kyma = kymaOf["manifests/"+w.Name]
		}
		byKyma[kyma] = append(byKyma[kyma], w)
	}
	t.Logf("%d assignments by the coordinator left out", assignments)
	if os.Getenv("E2E_SHARD_WRITES") != "" {
		for kyma, ws := range byKyma {
			for _, w := range ws {
				t.Logf("%s: %s %s", kyma, w, w.Body)
			}
		}
	}
	runs := map[string][]harness.OwnerRun{}
	for kyma, ws := range byKyma {
		runs[kyma] = harness.OwnerRuns(ws)
	}
	return runs
}

package harness

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWritesInReadsTheWritesWithTheirTimesAndBodies(t *testing.T) {
	log := `{"stage":"ResponseComplete","verb":"get","requestURI":"/x","user":{"username":"a"},"responseStatus":{"code":200}}
{"stage":"ResponseStarted","verb":"patch","user":{"username":"a"},"responseStatus":{"code":200}}
{"stage":"ResponseComplete","verb":"patch","user":{"username":"system:serviceaccount:kcp-shards:s-a"},"objectRef":{"resource":"kymas","namespace":"kcp-shards","name":"k1","apiGroup":"operator.kyma-project.io","subresource":"status"},"responseStatus":{"code":200},"requestObject":{"metadata":{"labels":{"x":"y"}}},"requestReceivedTimestamp":"2026-12-02T22:00:00.000100Z","stageTimestamp":"2026-12-02T22:00:00.002000Z"}
{"stage":"ResponseComplete","verb":"delete","user":{"username":"b"},"objectRef":{"resource":"manifests","namespace":"kcp-shards","name":"k1-m"},"responseStatus":{"code":404}}
`
	path := filepath.Join(t.TempDir(), "audit.log")
	require.NoError(t, os.WriteFile(path, []byte(log), 0o600))
	writes, err := writesIn(path)
	require.NoError(t, err)
	require.Len(t, writes, 2)
	w := writes[0]
	assert.Equal(t, "patch status kymas k1", w.Verb+" "+w.Subresource+" "+w.Resource+" "+w.Name)
	assert.Equal(t, time.Date(2026, 12, 2, 22, 0, 0, 100_000, time.UTC), w.Received.UTC())
	assert.Equal(t, 2*time.Millisecond-100*time.Microsecond, w.Completed.Sub(w.Received))
	assert.JSONEq(t, `{"metadata":{"labels":{"x":"y"}}}`, string(w.Body))
	assert.Equal(t, "delete", writes[1].Verb)
	assert.Equal(t, 404, writes[1].Code)
}

func at(ms int) time.Time {
	return time.Date(2026, 12, 2, 22, 0, 0, 0, time.UTC).Add(time.Duration(ms) * time.Millisecond)
}

func write(user string, received, completed int) Write {
	return Write{User: user, Received: at(received), Completed: at(completed)}
}

// A Kyma handed from c to a shows two runs, the first completed before
// the second begins; a writer that starts before the other's last write
// completed, or that comes back, overlaps.
func TestOverlapsFindsConcurrentAndInterleavedOwners(t *testing.T) {
	clean := OwnerRuns([]Write{write("a", 30, 31), write("c", 0, 2), write("c", 1, 5), write("a", 20, 22)})
	require.Len(t, clean, 2)
	assert.Equal(t, OwnerRun{User: "c", Writes: 2, First: at(0), Last: at(5)}, clean[0])
	assert.Equal(t, OwnerRun{User: "a", Writes: 2, First: at(20), Last: at(31)}, clean[1])
	assert.Empty(t, Overlaps(clean))

	concurrent := OwnerRuns([]Write{write("c", 0, 10), write("a", 5, 6)})
	assert.Len(t, Overlaps(concurrent), 1, "a's write was received while c's was in flight")

	interleaved := OwnerRuns([]Write{write("c", 0, 1), write("a", 2, 3), write("c", 4, 5)})
	overlaps := Overlaps(interleaved)
	require.Len(t, overlaps, 1)
	assert.Contains(t, overlaps[0], "c wrote again")
}

func TestOnlyTouchesAllowsTheGivenLabelsAndAnnotationsOnly(t *testing.T) {
	labels, annotations := []string{"operator.kyma-project.io/shard"}, []string{"operator.kyma-project.io/shard-assigned"}
	for name, tc := range map[string]struct {
		body string
		want bool
	}{
		"merge patch":                {`{"metadata":{"labels":{"operator.kyma-project.io/shard":"a"},"annotations":{"operator.kyma-project.io/shard-assigned":"a"},"resourceVersion":"7"}}`, true},
		"server-side apply":          {`{"apiVersion":"operator.kyma-project.io/v1beta2","kind":"Kyma","metadata":{"name":"k","namespace":"n","labels":{"operator.kyma-project.io/shard":"b"}}}`, true},
		"json patch":                 {`[{"op":"replace","path":"/metadata/labels/operator.kyma-project.io~1shard","value":"b"}]`, true},
		"another label":              {`{"metadata":{"labels":{"operator.kyma-project.io/shard":"a","x":"y"}}}`, false},
		"the owner annotation":       {`{"metadata":{"annotations":{"operator.kyma-project.io/shard-owner":"a"}}}`, false},
		"a status":                   {`{"status":{"state":"Ready"}}`, false},
		"json patch of another path": {`[{"op":"add","path":"/metadata/finalizers/-","value":"f"}]`, false},
		"no body":                    {``, false},
	} {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tc.want, OnlyTouches(json.RawMessage(tc.body), labels, annotations))
		})
	}
}

package intake

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func key(name string) types.NamespacedName { return types.NamespacedName{Namespace: "kcp", Name: name} }

// clock is a settable time for the Gate's expiry.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func startedGate(t *testing.T, limit int) (*Gate, *clock, workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	t.Helper()
	c := &clock{t: time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)}
	g := New(limit, time.Minute)
	g.now = c.now
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	t.Cleanup(q.ShutDown)
	require.NoError(t, g.Start(t.Context(), q))
	return g, c, q
}

// drain returns the Kymas the Gate put into the queue, in order.
func drain(q workqueue.TypedRateLimitingInterface[reconcile.Request]) []string {
	var out []string
	for q.Len() > 0 {
		req, _ := q.Get()
		out = append(out, req.Name)
		q.Done(req)
	}
	return out
}

func TestGateAdmitsWhileTheManifestsWaitingAreFewerThanTheLimit(t *testing.T) {
	g, _, q := startedGate(t, 3)
	assert.True(t, g.Admit(key("a")), "room for three new Manifests")
	g.Created(key("a-x"))
	g.Created(key("a-y"))
	assert.True(t, g.Admit(key("b")), "two wait")
	g.Created(key("b-x"))
	assert.False(t, g.Admit(key("c")), "three wait: c waits its turn")
	assert.False(t, g.Admit(key("d")))
	assert.False(t, g.Admit(key("c")), "asked again, c keeps its place")
	assert.Equal(t, 2, g.waiting())
	assert.Empty(t, drain(q))

	g.Started(key("a-x"))
	assert.Equal(t, []string{"c"}, drain(q), "a Manifest taken up makes room for the first in line")
	assert.False(t, g.Admit(key("e")), "a newcomer does not pass those in line")
	assert.True(t, g.Admit(key("c")), "c's turn is kept for it")
	g.Created(key("c-x"))
	g.Started(key("a-y"))
	g.Started(key("b-x"))
	assert.Equal(t, []string{"d", "e"}, drain(q), "oldest first")
}

func TestGateWithoutLimitAdmitsAll(t *testing.T) {
	for _, g := range []*Gate{nil, New(0, time.Minute)} {
		for i := range 100 {
			g.Created(key(fmt.Sprintf("m%d", i)))
			assert.True(t, g.Admit(key(fmt.Sprintf("k%d", i))))
		}
	}
}

func TestGateExpiresWhatIsNeverTakenUp(t *testing.T) {
	g, c, q := startedGate(t, 2)
	g.Created(key("orphan-1"))
	g.Created(key("orphan-2"))
	assert.False(t, g.Admit(key("a")))
	c.t = c.t.Add(59 * time.Second)
	assert.False(t, g.Admit(key("b")), "still waiting for the Manifests")
	c.t = c.t.Add(time.Second)
	g.Started(key("unrelated"))
	assert.Equal(t, []string{"a", "b"}, drain(q), "Manifests never reconciled stop counting after the expiry")

	// a and b are admitted but never come back (paused, say): their room
	// comes back after the expiry as well.
	assert.False(t, g.Admit(key("c")), "the room is a's and b's")
	c.t = c.t.Add(time.Minute)
	g.Started(key("unrelated"))
	assert.Equal(t, []string{"c"}, drain(q), "room again")
}

func TestGateForgetsKymasThatAreGone(t *testing.T) {
	g, _, q := startedGate(t, 1)
	g.Created(key("a-x"))
	assert.False(t, g.Admit(key("gone")))
	assert.False(t, g.Admit(key("b")))
	g.Forget(key("gone"))
	g.Started(key("a-x"))
	assert.Equal(t, []string{"b"}, drain(q))
	assert.Zero(t, g.waiting())
}

func TestGateCountsAManifestOnce(t *testing.T) {
	g, _, _ := startedGate(t, 2)
	g.Created(key("a-x"))
	g.Created(key("a-x"))
	assert.Equal(t, 1, g.backlog())
	g.Started(key("a-x"))
	g.Created(key("a-x")) // deleted and created again
	assert.Equal(t, 1, g.backlog())
}

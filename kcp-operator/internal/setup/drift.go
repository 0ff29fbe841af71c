package setup

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/lifecycle-manager/kcp-operator/internal/agent"
	"github.com/lifecycle-manager/kcp-operator/internal/index"
	"github.com/lifecycle-manager/kcp-operator/internal/push"
	"github.com/lifecycle-manager/listener"
	"github.com/lifecycle-manager/listener/event"
	"github.com/lifecycle-manager/listener/eventsource"
)

// driftBuffer bounds the drift events waiting for their controller.
const driftBuffer = 1024

// pushed is a request a drift event makes, with how to queue it.
type pushed struct {
	req      reconcile.Request
	recheck  time.Duration
	priority int
}

// pushedSource is the source of a controller's requests from drift events.
type pushedSource struct{ in <-chan pushed }

func (pushedSource) String() string { return "drift events" }

// Start queues the requests the fan-out sends until ctx ends.
func (s pushedSource) Start(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case p := <-s.in:
				eventsource.EnqueueAt(q, p.req, p.recheck, p.priority)
			}
		}
	}()
	return nil
}

// driftFanOut consumes the drift watch's events, which concern two
// controllers: changes of module resources go to the Manifest that placed
// them, changes of the agent's own objects to the Kyma whose agent it is.
type driftFanOut struct {
	listener    *listener.Server
	reader      client.Reader
	agentSecret string
	// waits receives the writes the Manifests' reconciles must read past.
	waits *push.Waits
	// budget gives a runtime's requests their priority.
	budget *push.Budget
	// recheck is when to look again after an event without a version.
	recheck   time.Duration
	manifests chan pushed
	agents    chan pushed
}

// NeedLeaderElection is true: the controllers run on the leader only.
func (f *driftFanOut) NeedLeaderElection() bool { return true }

// Start consumes until ctx ends.
func (f *driftFanOut) Start(ctx context.Context) error {
	err := f.listener.Consume(ctx, agent.DriftManager, func(ev event.Event) {
		out, reqs := f.manifests, index.ManifestsOf(ctx, f.reader, ev)
		if f.isAgentObject(ev) {
			out, reqs = f.agents, index.KymasOf(ctx, f.reader, ev.RuntimeID)
		}
		if len(reqs) == 0 {
			return
		}
		p := pushed{recheck: f.recheck, priority: f.budget.Priority(ev.RuntimeID)}
		for _, r := range reqs {
			p.req = r
			if out == f.manifests && versioned(ev) {
				// The Manifest's reconcile reads the object past the write.
				f.waits.Expect(r.NamespacedName, push.ObjectOf(ev), ev.OldResourceVersion, ev.Received)
				p.recheck = 0
			}
			select {
			case out <- p:
			case <-ctx.Done():
				return
			}
		}
	})
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("consuming drift events: %w", err)
	}
	return nil
}

func (f *driftFanOut) isAgentObject(ev event.Event) bool {
	if ev.GVK.Kind == "Secret" {
		return ev.Object.Name == f.agentSecret
	}
	return ev.Object.Name == agent.Fullname(ev.Object.Namespace) ||
		(ev.GVK.Kind == "ValidatingWebhookConfiguration" && strings.HasPrefix(ev.Object.Name, "skr-agent"))
}

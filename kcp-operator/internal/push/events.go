package push

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/lifecycle-manager/kcp-operator/internal/index"
	"github.com/lifecycle-manager/listener/event"
)

// KymaEvents maps an event to its runtime's Kyma, marks it in tracker and
// records in waits the write the Kyma's reconcile must read past.
func KymaEvents(reader client.Reader, tracker *Tracker, waits *Waits) func(context.Context, event.Event) []reconcile.Request {
	return func(ctx context.Context, ev event.Event) []reconcile.Request {
		reqs := index.KymasOf(ctx, reader, ev.RuntimeID)
		for _, r := range reqs {
			tracker.Mark(r.NamespacedName, ev.Received)
			waits.Expect(r.NamespacedName, ObjectOf(ev), ev.OldResourceVersion, ev.Received)
		}
		return reqs
	}
}

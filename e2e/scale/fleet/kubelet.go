package fleet

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/e2e/harness"
)

// RunKubelet plays the kubelet of every runtime API server until Close:
// each Deployment of the operator becomes available. One watch per API
// server, not a poll per runtime, so that the harness costs the servers
// little next to the operator.
func (f *Fleet) RunKubelet() {
	ctx := f.background
	for n := range f.servers {
		go func() {
			for ctx.Err() == nil {
				if err := f.kubelet(ctx, f.servers[n]); err != nil && ctx.Err() == nil {
					f.opts.Progress("kubelet of %s: %v (restarting)", f.Servers[n].Name, err)
					time.Sleep(time.Second)
				}
			}
		}()
	}
}

func (f *Fleet) kubelet(ctx context.Context, c client.WithWatch) error {
	managed := client.MatchingLabels{shared.ManagedByLabel: shared.OperatorName}
	var list appsv1.DeploymentList
	if err := c.List(ctx, &list, managed); err != nil {
		return fmt.Errorf("listing Deployments: %w", err)
	}
	work := make(chan *appsv1.Deployment, 4096)
	defer close(work)
	for range 4 {
		go func() {
			for d := range work {
				if err := harness.MarkAvailable(ctx, c, d); err != nil && ctx.Err() == nil {
					f.opts.Progress("kubelet: %v", err)
				}
			}
		}()
	}
	for i := range list.Items {
		work <- &list.Items[i]
	}
	w, err := c.Watch(ctx, &appsv1.DeploymentList{}, managed,
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})
	if err != nil {
		return fmt.Errorf("watching Deployments: %w", err)
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		switch ev.Type {
		case watch.Added, watch.Modified:
			if d, ok := ev.Object.(*appsv1.Deployment); ok {
				work <- d
			}
		case watch.Error:
			return fmt.Errorf("watch of Deployments ended: %v", ev.Object)
		}
	}
	return nil
}

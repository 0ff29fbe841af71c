package fleet

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
)

// Edit is one runtime edit and when the KCP showed it.
type Edit struct {
	// At is the write's time since the series began.
	At time.Duration
	// Latency is from the write in the runtime to the KCP Kyma carrying
	// it: the push, the reconcile's start and its first KCP write. It is
	// an upper bound of write → reconcile start.
	Latency time.Duration
	// Stored is how long the runtime's API server took to answer the
	// write (its admission webhooks, the agent's included, and storage):
	// the part of Latency before the operator can see the edit.
	Stored time.Duration
}

// PushEdits makes n edits, rate per second, each to the runtime Kyma of a
// random runtime with an agent (first <= i < end), and measures when the
// KCP Kyma carries it. Edits that the KCP does not show within a minute
// are lost.
func (f *Fleet) PushEdits(ctx context.Context, first, end, n int, rate float64, tag string) ([]Edit, int, error) {
	seen, stop, err := f.watchControllerNames(ctx)
	if err != nil {
		return nil, 0, err
	}
	defer stop()
	start := time.Now()
	var made []madeEdit
	tick := time.NewTicker(time.Duration(float64(time.Second) / rate))
	defer tick.Stop()
	for j := range n {
		value := fmt.Sprintf("%s-%d", tag, j)
		i := first + rand.IntN(end-first) //nolint:gosec // picking a runtime, not a secret
		at, stored, err := f.editRuntimeKyma(ctx, i, value)
		if err != nil {
			return nil, 0, err
		}
		made = append(made, madeEdit{kyma: KymaName(i), value: value, at: at, stored: stored})
		select {
		case <-ctx.Done():
			return nil, 0, ctx.Err()
		case <-tick.C:
		}
	}
	deadline := time.Now().Add(time.Minute)
	for {
		edits := arrivals(made, seen, start)
		if len(edits) == len(made) || time.Now().After(deadline) {
			return edits, len(made) - len(edits), nil
		}
		time.Sleep(250 * time.Millisecond)
	}
}

type madeEdit struct {
	kyma, value string
	at          time.Time
	stored      time.Duration
}

// arrivals are the edits the KCP showed. An edit that a later edit of the
// same runtime overwrote before the operator read it arrived with the
// first later value the KCP showed: the operator syncs the runtime's
// current state, not every intermediate one.
func arrivals(made []madeEdit, seen func(string) (time.Time, bool), start time.Time) []Edit {
	var edits []Edit
	for j, e := range made {
		var shown time.Time
		for _, later := range made[j:] {
			if later.kyma != e.kyma {
				continue
			}
			if t, ok := seen(later.kyma + "/" + later.value); ok && (shown.IsZero() || t.Before(shown)) {
				shown = t
			}
		}
		if !shown.IsZero() {
			edits = append(edits, Edit{At: e.at.Sub(start), Latency: shown.Sub(e.at), Stored: e.stored})
		}
	}
	return edits
}

// editRuntimeKyma sets the controller of the first module of runtime i's
// Kyma, as a runtime admin would, and returns when it wrote and how long
// the write took.
func (f *Fleet) editRuntimeKyma(ctx context.Context, i int, value string) (time.Time, time.Duration, error) {
	c := f.server(i)
	key := client.ObjectKey{Namespace: RuntimeNamespace(i), Name: shared.DefaultRuntimeKymaName}
	for attempt := 0; ; attempt++ {
		k := &v1beta2.Kyma{}
		if err := c.Get(ctx, key, k); err != nil {
			return time.Time{}, 0, fmt.Errorf("reading the runtime Kyma of %s: %w", RuntimeID(i), err)
		}
		if len(k.Spec.Modules) == 0 {
			return time.Time{}, 0, fmt.Errorf("the runtime Kyma of %s has no modules", RuntimeID(i))
		}
		k.Spec.Modules[0].ControllerName = value
		at := time.Now()
		err := c.Update(ctx, k)
		if err == nil {
			return at, time.Since(at), nil
		}
		if !apierrors.IsConflict(err) || attempt == 10 {
			return time.Time{}, 0, fmt.Errorf("editing the runtime Kyma of %s: %w", RuntimeID(i), err)
		}
	}
}

// watchControllerNames watches the KCP Kymas and remembers when each
// "kyma/controller" of a first module was first seen.
func (f *Fleet) watchControllerNames(ctx context.Context) (seen func(string) (time.Time, bool), stop func(), err error) {
	var head v1beta2.KymaList
	if err := f.kcp.List(ctx, &head, client.InNamespace(Namespace), client.Limit(1)); err != nil {
		return nil, nil, fmt.Errorf("listing Kymas: %w", err)
	}
	w, err := f.kcp.Watch(ctx, &v1beta2.KymaList{}, client.InNamespace(Namespace),
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: head.ResourceVersion}})
	if err != nil {
		return nil, nil, fmt.Errorf("watching Kymas: %w", err)
	}
	var mu sync.Mutex
	first := map[string]time.Time{}
	go func() {
		for ev := range w.ResultChan() {
			k, ok := ev.Object.(*v1beta2.Kyma)
			if !ok || ev.Type != watch.Modified || len(k.Spec.Modules) == 0 {
				continue
			}
			key := k.Name + "/" + k.Spec.Modules[0].ControllerName
			mu.Lock()
			if _, dup := first[key]; !dup {
				first[key] = time.Now()
			}
			mu.Unlock()
		}
	}()
	seen = func(key string) (time.Time, bool) {
		mu.Lock()
		defer mu.Unlock()
		t, ok := first[key]
		return t, ok
	}
	return seen, w.Stop, nil
}

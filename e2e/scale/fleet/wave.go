package fleet

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/e2e/scale/report"
)

// waveLabel touches every Kyma and Manifest: the operator's predicates let
// label changes through, so each gets one reconcile, the work the periodic
// resync (--requeue-success) does once per interval.
const waveLabel = "scale.lifecycle-manager.io/resync-wave"

// stillSamples is how many samples the reconcile counters must stand
// still for the wave to be over.
const stillSamples = 3

// resyncWave forces one reconcile of every Kyma and Manifest and measures
// what it costs the operator; the idle target counts that cost spread over
// the resync interval.
func (ru *run) resyncWave(ctx context.Context) error {
	var objects int
	a, err := ru.absorb(ctx, change{
		profile: "cpu-resync-wave.pprof",
		make: func(ctx context.Context) error {
			var err error
			objects, err = ru.f.touchAll(ctx, strconv.FormatInt(time.Now().Unix(), 10))
			return err
		},
		settle: func(wait context.Context, a *absorbed) error { return ru.waitWaveSettled(wait, a, objects) },
	})
	if err != nil {
		return err
	}
	cpu := a.cpu()
	writes := delta(a.before.kcpMethods, a.after.kcpMethods)
	ru.r.Resync = &report.Resync{Objects: objects, Reconciles: a.reconciles(), Seconds: a.seconds(), CPUSeconds: cpu,
		AmortizedCorePercent: 100 * cpu / ru.opts.ResyncInterval.Seconds(),
		KCPWrites:            writes["PATCH"] + writes["PUT"] + writes["POST"] + writes["DELETE"],
		Served:               a.served}
	return nil
}

// waitWaveSettled samples the operator until the wave's reconciles are
// done, and leaves the last sample in a.after.
func (ru *run) waitWaveSettled(wait context.Context, a *absorbed, objects int) error {
	last, still := a.before.total(), 0
	for still < stillSamples {
		select {
		case <-wait.Done():
			if errors.Is(wait.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("the reconciles of the wave did not settle within %s", ru.opts.ReadyTimeout)
			}
			return wait.Err()
		case <-time.After(2 * time.Second):
		}
		now, err := ru.f.read(wait)
		if err != nil {
			return err
		}
		still = stillAfter(still, last, now.total(), a.before.total()+float64(objects))
		last, a.after = now.total(), now
	}
	return nil
}

// stillAfter counts the samples the reconcile counter stood still for: it
// did not move since the last sample, and reached at least one reconcile
// per object of the wave (floor). A counter that moves starts it anew.
func stillAfter(still int, last, now, floor float64) int {
	if now == last && now >= floor {
		return still + 1
	}
	return 0
}

// touchAll sets waveLabel on every Kyma and Manifest of the KCP.
func (f *Fleet) touchAll(ctx context.Context, value string) (int, error) {
	var kymas v1beta2.KymaList
	var manifests v1beta2.ManifestList
	if err := f.kcp.List(ctx, &kymas, client.InNamespace(Namespace)); err != nil {
		return 0, fmt.Errorf("listing Kymas: %w", err)
	}
	if err := f.kcp.List(ctx, &manifests, client.InNamespace(Namespace)); err != nil {
		return 0, fmt.Errorf("listing Manifests: %w", err)
	}
	objs := make([]client.Object, 0, len(kymas.Items)+len(manifests.Items))
	for i := range kymas.Items {
		objs = append(objs, &kymas.Items[i])
	}
	for i := range manifests.Items {
		objs = append(objs, &manifests.Items[i])
	}
	patch := fmt.Appendf(nil, `{"metadata":{"labels":{%q:%q}}}`, waveLabel, value)
	err := forEach(ctx, len(objs), 32, func(ctx context.Context, i int) error {
		return f.kcp.Patch(ctx, objs[i], client.RawPatch("application/merge-patch+json", patch))
	})
	if err != nil {
		return 0, fmt.Errorf("labelling for the resync wave: %w", err)
	}
	return len(objs), nil
}

package fleet

import (
	"context"
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

// resyncWave forces one reconcile of every Kyma and Manifest and measures
// what it costs the operator; the idle target counts that cost spread over
// the resync interval.
func (ru *run) resyncWave(ctx context.Context) error {
	f := ru.f
	before, err := f.read(ctx)
	if err != nil {
		return err
	}
	servedBefore, err := f.readServed(ctx)
	if err != nil {
		return err
	}
	f.profileCPU(ctx, "cpu-resync-wave.pprof", 0)
	objects, err := f.touchAll(ctx, strconv.FormatInt(time.Now().Unix(), 10))
	if err != nil {
		return err
	}
	// Done when the reconcile counters stood still for three samples, after
	// at least one reconcile per object.
	var after reading
	last, still := before.total(), 0
	deadline := time.Now().Add(ru.opts.ReadyTimeout)
	for still < 3 {
		if time.Now().After(deadline) {
			return fmt.Errorf("the reconciles of the wave did not settle within %s", ru.opts.ReadyTimeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Second):
		}
		if after, err = f.read(ctx); err != nil {
			return err
		}
		if after.total() == last && after.total() >= before.total()+float64(objects) {
			still++
		} else {
			still = 0
		}
		last = after.total()
	}
	cpu := after.usage.CPUSeconds - before.usage.CPUSeconds
	writes := delta(before.kcpMethods, after.kcpMethods)
	ru.r.Resync = &report.Resync{Objects: objects, Reconciles: after.total() - before.total(),
		Seconds: after.at.Sub(before.at).Seconds(), CPUSeconds: cpu,
		AmortizedCorePercent: 100 * cpu / ru.opts.ResyncInterval.Seconds(),
		KCPWrites:            writes["PATCH"] + writes["PUT"] + writes["POST"] + writes["DELETE"]}
	servedAfter, err := f.readServed(ctx)
	if err != nil {
		return err
	}
	ru.r.Resync.Served = servedSince(servedBefore, servedAfter)
	return nil
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

package fleet

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/e2e/scale/report"
)

// boundNamespace holds the bare client's objects, which the operator does
// not watch. Each bound has its own: at 10,000 Kymas the KCP had not
// finished deleting the first bound's 50,000 Manifests when the second
// began, and its creates failed as "already exists".
func boundNamespace(withRuntimes bool) string {
	if withRuntimes {
		return "scale-bound-full"
	}
	return "scale-bound"
}

// MeasureBound measures the physical limit: how fast a bare client with
// workers goroutines performs the KCP writes that the design needs to make
// every Kyma Ready — per module one Manifest create and one status write,
// per Kyma one status write — against the same KCP. The objects are copies
// of what the operator wrote (so that sizes match), in a namespace of their
// own; the Kymas are created before the clock starts, as users create them
// in both cases. Everything is deleted again afterwards.
//
// withRuntimes makes it the full bound: each worker also writes, per Kyma,
// a copy of what the operator wrote into one Ready runtime (namespace,
// runtime Kyma and its status, catalog, agent, module objects and the
// kubelet's Deployment statuses) into a namespace of its own on that
// Kyma's runtime API server — the work a module install cannot avoid on
// the runtime side, which here shares the machine's cores.
//
// With operatorReads, the runtime requests the servers answered while the
// operator converged, the full bound then also prices the operator's
// runtime reads (measureReads), apart from its own time.
func (f *Fleet) MeasureBound(ctx context.Context, workers int, withRuntimes bool, operatorReads map[string]float64) (*report.Bound, error) {
	modelIndex, kymaModel, manifestModels, err := f.boundModels(ctx)
	if err != nil {
		return nil, err
	}
	var rtModel *runtimeModel
	if withRuntimes {
		if rtModel, err = f.readRuntimeModel(ctx, modelIndex); err != nil {
			return nil, err
		}
		if !f.boundEndsRun {
			defer f.deleteRuntimeCopies(context.WithoutCancel(ctx), rtModel)
		}
	}
	ns := boundNamespace(withRuntimes)
	if err := f.kcp.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); client.IgnoreAlreadyExists(err) != nil {
		return nil, fmt.Errorf("creating namespace %s: %w", ns, err)
	}
	if !f.boundEndsRun { // else the run ends next: its servers go with it
		defer f.deleteBound(context.WithoutCancel(ctx), ns)
	}
	kymas := make([]*v1beta2.Kyma, f.opts.Kymas)
	err = forEach(ctx, f.opts.Kymas, workers, func(ctx context.Context, i int) error {
		kymas[i] = &v1beta2.Kyma{ObjectMeta: metav1.ObjectMeta{Name: KymaName(i), Namespace: ns,
			Labels: kymaModel.Labels}, Spec: kymaModel.Spec}
		return f.kcp.Create(ctx, kymas[i])
	})
	if err != nil {
		return nil, fmt.Errorf("creating the bound's Kymas: %w", err)
	}
	w := boundWriter{apply: f.opts.BoundApply}
	servedBefore, err := f.readServed(ctx)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	err = forEach(ctx, f.opts.Kymas, workers, func(ctx context.Context, i int) error {
		if err := f.boundWrites(ctx, w, kymas[i], kymaModel.Status, manifestModels); err != nil {
			return err
		}
		if rtModel == nil {
			return nil
		}
		return f.copyRuntime(ctx, w, i, rtModel)
	})
	if err != nil {
		return nil, fmt.Errorf("bare-client writes: %w", err)
	}
	seconds := time.Since(start).Seconds()
	b := &report.Bound{Manifests: f.opts.Kymas * len(manifestModels), Writes: f.opts.Kymas * (2*len(manifestModels) + 1),
		Workers: workers, Seconds: seconds, Apply: w.apply}
	if servedAfter, err := f.readServed(ctx); err == nil {
		b.Served = servedSince(servedBefore, servedAfter)
	} else {
		f.opts.Progress("reading what the API servers answered during the bound: %v", err)
	}
	if rtModel != nil && len(operatorReads) > 0 {
		reads := readsPerRuntime(operatorReads, f.opts.Kymas, rtModel)
		if b.Reads, err = f.measureReads(ctx, workers, rtModel, reads); err != nil {
			return nil, err
		}
	}
	if rtModel != nil {
		b.RuntimeWrites = f.opts.Kymas * rtModel.writes()
	}
	b.WritesPerSecond = float64(b.Writes+b.RuntimeWrites) / seconds
	return b, nil
}

// boundModels are a Ready Kyma and its Manifests, as the operator wrote them.
// After a convergence that timed out, not every Kyma is Ready, so it takes
// the first that is.
func (f *Fleet) boundModels(ctx context.Context) (int, *v1beta2.Kyma, []v1beta2.Manifest, error) {
	i, kyma, err := f.firstReadyKyma(ctx)
	if err != nil {
		return 0, nil, nil, err
	}
	var list v1beta2.ManifestList
	if err := f.kcp.List(ctx, &list, client.InNamespace(Namespace),
		client.MatchingLabels{shared.KymaNameLabel: kyma.Name}); err != nil {
		return 0, nil, nil, fmt.Errorf("listing the model Manifests: %w", err)
	}
	if len(list.Items) != f.opts.Modules {
		return 0, nil, nil, fmt.Errorf("model Kyma %s has %d Manifests, want %d", kyma.Name, len(list.Items), f.opts.Modules)
	}
	return i, kyma, list.Items, nil
}

// firstReadyKyma returns the first Kyma, and its index, that is Ready with
// every module.
func (f *Fleet) firstReadyKyma(ctx context.Context) (int, *v1beta2.Kyma, error) {
	for i := range f.opts.Kymas {
		kyma := &v1beta2.Kyma{}
		if err := f.kcp.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: KymaName(i)}, kyma); err != nil {
			return 0, nil, fmt.Errorf("reading a model Kyma: %w", err)
		}
		if kyma.Status.State == shared.StateReady && len(kyma.Status.Modules) == f.opts.Modules {
			return i, kyma, nil
		}
	}
	return 0, nil, fmt.Errorf("no Kyma is Ready with its %d modules to model the bound on", f.opts.Modules)
}

func (f *Fleet) boundWrites(ctx context.Context, w boundWriter, k *v1beta2.Kyma, status v1beta2.KymaStatus, models []v1beta2.Manifest) error {
	for m := range models {
		mf := &v1beta2.Manifest{ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("%s-%s", k.Name, models[m].Labels[shared.ModuleNameLabel]), Namespace: k.Namespace,
			Labels: models[m].Labels}, Spec: models[m].Spec}
		if err := w.create(ctx, f.kcp, mf); err != nil {
			return err
		}
		mf.Status = models[m].Status
		if err := w.status(ctx, f.kcp, mf, false); err != nil {
			return err
		}
	}
	k.Status = status
	return w.status(ctx, f.kcp, k, false)
}

func (f *Fleet) deleteBound(ctx context.Context, ns string) {
	for _, obj := range []client.Object{&v1beta2.Manifest{}, &v1beta2.Kyma{}} {
		if err := f.kcp.DeleteAllOf(ctx, obj, client.InNamespace(ns)); err != nil {
			f.opts.Progress("deleting the bound's objects: %v", err)
		}
	}
}

package kyma

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/index"
	"github.com/lifecycle-manager/kcp-operator/internal/resolve"
	"github.com/lifecycle-manager/kcp-operator/internal/runtimewrite"
)

// moduleResult is what became of one module listed in the Kyma.
type moduleResult struct {
	listed   v1beta2.Module
	resolved *resolve.Module
	err      error
	manifest *v1beta2.Manifest
	// held says why the resolved version was not installed: it is lower
	// than the installed one, and the Kyma does not allow that (the status
	// shows the installed version as Warning); or, with maintenance, it
	// requires downtime and waits for the maintenance window
	// (maintenance.go).
	held string
	// maintenance marks a hold for the maintenance window: a planned wait,
	// so the module keeps the state of what is installed, as the public
	// operator shows it (status maintenance: true), instead of a Warning.
	maintenance bool
	// leaving is a module no longer listed whose Manifest is being
	// deleted: it stays in the status until it has left the runtime.
	leaving bool
}

// AllowDowngradeAnnotation on a Kyma lets its modules move to a lower
// version than the installed one; without it such a change is refused.
const AllowDowngradeAnnotation = shared.AllowDowngradeAnnotation

// ReasonDowngradeRefused is the Event reason of a refused downgrade.
const ReasonDowngradeRefused = "DowngradeRefused"

// syncModules resolves the listed and the mandatory modules and keeps one
// Manifest per managed module: applied when it changed, released when the
// module became unmanaged, deleted when the module went away.
func (r *Reconciler) syncModules(ctx context.Context, kyma *v1beta2.Kyma) ([]moduleResult, error) {
	existing, err := r.manifestsOf(ctx, kyma)
	if err != nil {
		return nil, err
	}
	keep := map[string]bool{}
	results := make([]moduleResult, 0, len(kyma.Spec.Modules))
	for _, m := range kyma.Spec.Modules {
		res := moduleResult{listed: m}
		res.resolved, res.err = r.Resolver.Resolve(ctx, kyma, m)
		switch {
		case res.err != nil:
			// A module that stops resolving (a template being replaced, say)
			// keeps its Manifest: resolution trouble never uninstalls. The
			// status names it, so that the next reconcile keeps it too.
			if prev := existing[previousManifest(kyma, m.Name)]; prev != nil {
				keep[prev.Name], res.manifest = true, prev
			}
			r.Events.Eventf(kyma, nil, corev1.EventTypeWarning, "ModuleResolutionFailed", "Resolve", "%s", res.err.Error())
		case m.IsManaged():
			name := ManifestName(kyma, res.resolved.ModuleName)
			keep[name] = true
			if res.held = r.refuseDowngrade(ctx, kyma, res.resolved, existing[name]); res.held != "" {
				res.manifest = existing[name] // stays as it is, on the installed version
				break
			}
			if res.held, res.err = r.holdForWindow(ctx, kyma, res.resolved, existing[name]); res.held != "" || res.err != nil {
				res.manifest = existing[name] // likewise, until the window opens or the policy is fixed
				res.maintenance = res.held != ""
				break
			}
			res.manifest, res.err = r.applyManifest(ctx, kyma, res.resolved, m, existing[name])
		}
		results = append(results, res)
	}
	mandatory, errs := r.Resolver.Mandatory(ctx, kyma)
	for _, err := range errs {
		log.FromContext(ctx).Error(err, "mandatory module does not resolve")
	}
	mandatoryStates := make(map[string]shared.State, len(mandatory))
	for _, m := range mandatory {
		name := ManifestName(kyma, m.ModuleName)
		keep[name] = true
		mf, err := r.applyManifest(ctx, kyma, m, v1beta2.Module{Name: m.Name}, existing[name])
		if err != nil {
			log.FromContext(ctx).Error(err, "applying the Manifest of a mandatory module", "module", m.Name)
			mf = existing[name]
		}
		if mf != nil {
			mandatoryStates[m.ModuleName] = mf.Status.State
		}
	}
	r.Metrics.observeMandatory(kyma, mandatoryStates)
	for _, name := range slices.Sorted(maps.Keys(existing)) {
		if keep[name] {
			continue
		}
		mf := existing[name]
		release := unmanaged(kyma, mf)
		if err := r.removeManifest(ctx, mf, release); err != nil {
			return nil, err
		}
		if !release {
			results = append(results, leavingModule(kyma, mf))
		}
	}
	return results, nil
}

// manifestsOf returns the Manifests of kyma by name.
func (r *Reconciler) manifestsOf(ctx context.Context, kyma *v1beta2.Kyma) (map[string]*v1beta2.Manifest, error) {
	var list v1beta2.ManifestList
	if err := r.KCP.List(ctx, &list, index.OfKyma(kyma)...); err != nil {
		return nil, fmt.Errorf("listing the Manifests of Kyma %s/%s: %w", kyma.Namespace, kyma.Name, err)
	}
	out := make(map[string]*v1beta2.Manifest, len(list.Items))
	for i := range list.Items {
		if metav1.IsControlledBy(&list.Items[i], kyma) {
			out[list.Items[i].Name] = &list.Items[i]
		}
	}
	return out, nil
}

// applyManifest writes the desired Manifest when it differs from current.
func (r *Reconciler) applyManifest(ctx context.Context, kyma *v1beta2.Kyma, m *resolve.Module, listed v1beta2.Module,
	current *v1beta2.Manifest,
) (*v1beta2.Manifest, error) {
	desired, err := buildManifest(kyma, m, listed, r.KCP.Scheme())
	if err != nil {
		return nil, fmt.Errorf("module %q: %w", m.Name, err)
	}
	if current != nil && current.Annotations[shared.SpecHashAnnotation] == desired.Annotations[shared.SpecHashAnnotation] {
		r.applied.forget(client.ObjectKeyFromObject(current))
		return current, nil
	}
	if err := r.writeManifest(ctx, desired, time.Now()); err != nil {
		return nil, err
	}
	if current == nil {
		return desired, nil
	}
	// The status of current describes what it installed before this change;
	// until the Manifest controller reports on the new spec, the module is
	// not Ready on the new version.
	pending := current.DeepCopy()
	pending.Status.State = shared.StateProcessing
	pending.Status.LastOperation = lastOperation(fmt.Sprintf("applying %s %s", m.ModuleName, m.Version))
	return pending, nil
}

// writeManifest applies desired unless this spec was applied to it so
// recently that the cache cannot have shown it yet.
func (r *Reconciler) writeManifest(ctx context.Context, desired *v1beta2.Manifest, now time.Time) error {
	key, spec := client.ObjectKeyFromObject(desired), appliedSpec{hash: desired.Annotations[shared.SpecHashAnnotation]}
	if r.applied.unseen(key, spec, now) {
		return nil
	}
	if err := runtimewrite.Apply(ctx, r.KCP, desired); err != nil {
		return fmt.Errorf("applying Manifest %s: %w", desired.Name, err)
	}
	r.applied.record(key, spec, now)
	return nil
}

// removeManifest deletes a Manifest; a released one first gets the
// unmanaged annotation, which tells the Manifest controller to leave the
// module's resources in the runtime.
func (r *Reconciler) removeManifest(ctx context.Context, mf *v1beta2.Manifest, release bool) error {
	r.applied.forget(client.ObjectKeyFromObject(mf))
	if !mf.DeletionTimestamp.IsZero() {
		return nil
	}
	if release && mf.Annotations[shared.UnmanagedAnnotation] != shared.EnabledValue {
		patch := client.MergeFrom(mf.DeepCopy())
		metav1.SetMetaDataAnnotation(&mf.ObjectMeta, shared.UnmanagedAnnotation, shared.EnabledValue)
		if err := r.KCP.Patch(ctx, mf, patch); err != nil {
			return fmt.Errorf("releasing Manifest %s: %w", mf.Name, err)
		}
	}
	if err := r.KCP.Delete(ctx, mf); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting Manifest %s: %w", mf.Name, err)
	}
	return nil
}

// unmanaged reports whether mf belongs to a module that is listed with managed: false.
func unmanaged(kyma *v1beta2.Kyma, mf *v1beta2.Manifest) bool {
	module := mf.Labels[shared.ModuleNameLabel]
	for _, m := range kyma.Spec.Modules {
		if !m.IsManaged() && (m.Name == module || previousManifest(kyma, m.Name) == mf.Name) {
			return true
		}
	}
	return false
}

// previousManifest is the Manifest the last status recorded for a listed module.
func previousManifest(kyma *v1beta2.Kyma, listedName string) string {
	if s := previousStatus(kyma, listedName); s != nil && s.Manifest != nil {
		return s.Manifest.Name
	}
	return ""
}

// ManifestName is the name of the Manifest of a module of a Kyma.
func ManifestName(kyma *v1beta2.Kyma, module string) string {
	name := kyma.Name + "-" + strings.ToLower(module)
	if len(name) > 253 {
		name = name[:236] + "-" + hashJSON(name)
	}
	return name
}

// refuseDowngrade returns why installing m over the current Manifest would
// be a downgrade the Kyma does not allow, or "" when it may be installed.
// Modules rarely support going back (their CRDs and stored data move
// forward), so a channel switch to a lower version needs an explicit
// opt-in. Versions that are not semver cannot be ordered and pass.
func (r *Reconciler) refuseDowngrade(ctx context.Context, kyma *v1beta2.Kyma, m *resolve.Module, current *v1beta2.Manifest) string {
	if current == nil || current.Spec.Version == m.Version || shared.IsEnabled(kyma.Annotations, AllowDowngradeAnnotation) {
		return ""
	}
	installed, ierr := semver.NewVersion(current.Spec.Version)
	offered, oerr := semver.NewVersion(m.Version)
	if err := errors.Join(ierr, oerr); err != nil {
		log.FromContext(ctx).V(1).Info("versions are not semver: no downgrade check", "module", m.Name,
			"installed", current.Spec.Version, "offered", m.Version, "reason", err.Error())
		return ""
	}
	if !offered.LessThan(installed) {
		return ""
	}
	msg := fmt.Sprintf("downgrade from %s to %s (channel %s) refused: %s stays installed; annotate the Kyma with %s=%s to allow it",
		current.Spec.Version, m.Version, m.Channel, current.Spec.Version, AllowDowngradeAnnotation, shared.EnabledValue)
	// One Event per refusal, not per reconcile: the status says it meanwhile.
	if prev := previousStatus(kyma, m.Name); prev == nil || prev.Message != msg {
		r.Events.Eventf(kyma, nil, corev1.EventTypeWarning, ReasonDowngradeRefused, "InstallModule", "module %s: %s", m.Name, msg)
	}
	return msg
}

// previousStatus is the status the last reconcile recorded for a listed module.
// leavingModule is the result of a module removed from the list, under the
// name its status had.
func leavingModule(kyma *v1beta2.Kyma, mf *v1beta2.Manifest) moduleResult {
	listed := v1beta2.Module{Name: mf.Labels[shared.ModuleNameLabel]}
	for _, ms := range kyma.Status.Modules {
		if ms.Manifest != nil && ms.Manifest.Name == mf.Name {
			listed = v1beta2.Module{Name: ms.Name, Channel: ms.Channel}
			break
		}
	}
	return moduleResult{listed: listed, manifest: mf, leaving: true}
}

func previousStatus(kyma *v1beta2.Kyma, listedName string) *v1beta2.ModuleStatus {
	for i := range kyma.Status.Modules {
		if kyma.Status.Modules[i].Name == listedName {
			return &kyma.Status.Modules[i]
		}
	}
	return nil
}

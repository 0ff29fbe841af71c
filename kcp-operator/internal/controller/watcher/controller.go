package watcher

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	networkingv1 "istio.io/client-go/pkg/apis/networking/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/runtimewrite"
)

// StatusOwner owns the Watcher status.
const StatusOwner = "lifecycle-manager-watcher"

// Reconciler reconciles Watchers.
type Reconciler struct {
	KCP     client.Client
	Events  events.EventRecorder
	Gateway GatewayConfig
	// Retry is the wait after an error, e.g. while no Gateway matches.
	Retry time.Duration
	// Direct: the listener terminates mTLS itself and agents reach it
	// without a route, so a Watcher needs no Istio object; it only gets
	// its status. Gateway is unused then.
	Direct bool
	// Route, set in a sharded operator in gateway mode, is this shard's
	// own route; nil: one route per Watcher for the whole fleet.
	Route *Route
}

// Route is one shard's event route: its agents post to Host, and its
// VirtualService of each Watcher sends those events to the shard's own
// listener Service. Only the Coordinator keeps the Gateway, the Watcher's
// finalizer and status; the other shards' VirtualServices go with the
// Watcher through their owner reference.
type Route struct {
	Shard string
	Host  string
	// Service is the shard's listener Service; empty: the Watcher's.
	Service     types.NamespacedName
	Coordinator bool
}

// keepsWatcher is whether this instance writes the Watcher itself.
func (r *Reconciler) keepsWatcher() bool { return r.Route == nil || r.Route.Coordinator }

type gatewayRef struct {
	namespace, name string
	hosts           []string
}

// Reconcile keeps the VirtualService of one Watcher.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	w := &v1beta2.Watcher{}
	if err := r.KCP.Get(ctx, req.NamespacedName, w); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !w.DeletionTimestamp.IsZero() {
		if !r.keepsWatcher() {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, r.delete(ctx, w)
	}
	if !r.keepsWatcher() {
		return ctrl.Result{}, r.applyVirtualService(ctx, w)
	}
	if r.Direct {
		return ctrl.Result{}, r.writeStatus(ctx, w, directCondition(w))
	}
	if err := r.ensureFinalizer(ctx, w); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.ensureGateway(ctx); err != nil {
		return ctrl.Result{}, err
	}
	configErr := r.applyVirtualService(ctx, w)
	if err := r.writeStatus(ctx, w, virtualServiceCondition(w, configErr)); err != nil {
		return ctrl.Result{}, err
	}
	if configErr != nil {
		return ctrl.Result{RequeueAfter: r.Retry}, nil //nolint:nilerr // reported in the Watcher status
	}
	return ctrl.Result{}, nil
}

func (r *Reconciler) applyVirtualService(ctx context.Context, w *v1beta2.Watcher) error {
	if w.ManagerName() == "" {
		return errNoManager()
	}
	gateways, err := r.gateways(ctx, w)
	if err != nil {
		return err
	}
	if r.Route != nil && r.Route.Host == "" {
		return nil // this shard installs no agents: nothing posts to it
	}
	vs, err := virtualService(w, gateways, r.Route)
	if err != nil {
		return err
	}
	if err := controllerutil.SetControllerReference(w, vs, r.KCP.Scheme()); err != nil {
		return fmt.Errorf("owning VirtualService %s: %w", w.Name, err)
	}
	return applyIfChanged(ctx, r.KCP, vs)
}

// gateways returns the Gateways in the Watcher's namespace that its selector picks.
func (r *Reconciler) gateways(ctx context.Context, w *v1beta2.Watcher) ([]gatewayRef, error) {
	sel, err := metav1.LabelSelectorAsSelector(&w.Spec.Gateway.LabelSelector)
	if err != nil {
		return nil, fmt.Errorf("spec.gateway.selector is invalid: %w", err)
	}
	var list networkingv1.GatewayList
	if err := r.KCP.List(ctx, &list, client.InNamespace(w.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return nil, fmt.Errorf("listing Istio Gateways: %w", err)
	}
	if len(list.Items) == 0 {
		return nil, fmt.Errorf("no Istio Gateway in namespace %s matches selector %q", w.Namespace, sel.String())
	}
	refs := make([]gatewayRef, 0, len(list.Items))
	for _, g := range list.Items {
		ref := gatewayRef{namespace: g.Namespace, name: g.Name}
		for _, s := range g.Spec.GetServers() {
			for _, h := range s.GetHosts() {
				if _, host, ok := strings.Cut(h, "/"); ok {
					h = host
				}
				ref.hosts = append(ref.hosts, h)
			}
		}
		refs = append(refs, ref)
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].name < refs[j].name })
	return refs, nil
}

// ensureGateway keeps the Gateway of the event endpoint when one is configured.
func (r *Reconciler) ensureGateway(ctx context.Context) error {
	if r.Gateway.Name == "" {
		return nil
	}
	gw, err := gatewayObject(r.Gateway)
	if err != nil {
		return err
	}
	return applyIfChanged(ctx, r.KCP, gw)
}

// applyIfChanged applies obj unless the cached copy carries the same hash.
func applyIfChanged(ctx context.Context, c client.Client, obj *unstructured.Unstructured) error {
	hash := runtimewrite.Hash([]any{obj.Object["spec"], obj.GetLabels(), obj.GetOwnerReferences()})
	current := &unstructured.Unstructured{}
	current.SetGroupVersionKind(obj.GroupVersionKind())
	err := c.Get(ctx, client.ObjectKeyFromObject(obj), current)
	if err == nil && current.GetAnnotations()[shared.SpecHashAnnotation] == hash {
		return nil
	}
	if client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("reading %s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	obj.SetAnnotations(map[string]string{shared.SpecHashAnnotation: hash})
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner(runtimewrite.FieldOwner), client.ForceOwnership); err != nil {
		return fmt.Errorf("applying %s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}

func (r *Reconciler) ensureFinalizer(ctx context.Context, w *v1beta2.Watcher) error {
	if controllerutil.ContainsFinalizer(w, shared.WatcherFinalizer) {
		return nil
	}
	patch := client.MergeFrom(w.DeepCopy())
	controllerutil.AddFinalizer(w, shared.WatcherFinalizer)
	if err := r.KCP.Patch(ctx, w, patch); err != nil {
		return fmt.Errorf("adding the finalizer to Watcher %s: %w", w.Name, err)
	}
	return nil
}

// delete removes the VirtualService, then the finalizer. In direct mode
// it removes only a finalizer left from a gateway-mode run: Istio's CRDs
// may be gone.
func (r *Reconciler) delete(ctx context.Context, w *v1beta2.Watcher) error {
	if !controllerutil.ContainsFinalizer(w, shared.WatcherFinalizer) {
		return nil
	}
	if !r.Direct {
		if err := r.deleteVirtualServices(ctx, w); err != nil {
			return err
		}
	}
	patch := client.MergeFrom(w.DeepCopy())
	controllerutil.RemoveFinalizer(w, shared.WatcherFinalizer)
	if err := r.KCP.Patch(ctx, w, patch); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("removing the finalizer of Watcher %s: %w", w.Name, err)
	}
	return nil
}

// deleteVirtualServices deletes the Watcher's VirtualServices: its own,
// and in a sharded operator each shard's.
func (r *Reconciler) deleteVirtualServices(ctx context.Context, w *v1beta2.Watcher) error {
	names := []string{w.Name}
	if r.Route != nil {
		var list networkingv1.VirtualServiceList
		if err := r.KCP.List(ctx, &list, client.InNamespace(w.Namespace)); err != nil {
			return fmt.Errorf("listing the VirtualServices of Watcher %s: %w", w.Name, err)
		}
		for _, vs := range list.Items {
			if metav1.IsControlledBy(vs, w) {
				names = append(names, vs.Name)
			}
		}
	}
	for _, name := range names {
		vs := &networkingv1.VirtualService{ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: name}}
		if err := r.KCP.Delete(ctx, vs); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting VirtualService %s: %w", name, err)
		}
	}
	return nil
}

// virtualServiceCondition says whether the Watcher's VirtualService routes
// its event paths.
func virtualServiceCondition(w *v1beta2.Watcher, configErr error) metav1.Condition {
	if configErr != nil {
		return metav1.Condition{Type: v1beta2.ConditionVirtualService, Status: metav1.ConditionFalse, Reason: ReasonError, Message: configErr.Error()}
	}
	return metav1.Condition{Type: v1beta2.ConditionVirtualService, Status: metav1.ConditionTrue, Reason: ReasonConfigured,
		Message: "VirtualService routes " + strings.Join(EventPaths(w.ManagerName()), ", ")}
}

// writeStatus reports cond in the Watcher's status when it changed: the
// Watcher is Ready unless cond's reason is ReasonError.
func (r *Reconciler) writeStatus(ctx context.Context, w *v1beta2.Watcher, cond metav1.Condition) error {
	status := *w.Status.DeepCopy()
	cond.ObservedGeneration, cond.LastTransitionTime = w.Generation, metav1.NewTime(time.Now().Truncate(time.Second))
	status.State = shared.StateReady
	configErr := cond.Reason == ReasonError
	if configErr {
		status.State = shared.StateError
	}
	meta.SetStatusCondition(&status.Conditions, cond)
	status.ObservedGeneration = w.Generation
	if equality.Semantic.DeepEqual(status, w.Status) {
		return nil
	}
	if status.State != w.Status.State {
		kind := corev1.EventTypeNormal
		if configErr {
			kind = corev1.EventTypeWarning
		}
		r.Events.Eventf(w, nil, kind, "State"+string(status.State), "Reconcile", "%s", cond.Message)
	}
	patch := client.MergeFrom(w.DeepCopy())
	w.Status = status
	if err := r.KCP.Status().Patch(ctx, w, patch); err != nil {
		return fmt.Errorf("writing the status of Watcher %s: %w", w.Name, err)
	}
	return nil
}

// Start keeps the event Gateway in place even while no Watcher exists: at
// start and then every interval. It runs on the leader only.
func (r *Reconciler) Start(ctx context.Context) error {
	if r.Gateway.Name == "" {
		return nil
	}
	t := time.NewTicker(gatewayResync)
	defer t.Stop()
	for {
		if err := r.ensureGateway(ctx); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "cannot keep the event Gateway")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// gatewayResync is how often the Gateway is checked without a Watcher event.
const gatewayResync = 5 * time.Minute

// errNoManager: a Watcher without a manager has no event path to route.
func errNoManager() error {
	return fmt.Errorf("the Watcher names no manager: set spec.manager or the %s label", shared.ManagedByLabel)
}

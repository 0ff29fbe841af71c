package leaderendpoint

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ManagedBy is the EndpointSlice's managed-by label: the endpointslice
// controller leaves slices of other managers alone.
const ManagedBy = "lifecycle-manager.operator.kyma-project.io"

// withdrawTimeout bounds the write that marks the endpoint not ready on
// shutdown; the lease is released only after it.
const withdrawTimeout = 5 * time.Second

// Publisher points the Service's EndpointSlice at this replica while it
// leads. Add it to the manager: it runs on every replica (so that it stops
// with the listener, in the first step of a shutdown) and waits for Elected.
type Publisher struct {
	// Client writes the slice; Reader reads the Service and the slice
	// (the API server: the manager's cache holds neither).
	Client client.Client
	Reader client.Reader
	// Service is the listener's Service, without a selector.
	Service types.NamespacedName
	// IP is this replica's address.
	IP netip.Addr
	// Elected is closed once this replica leads (manager.Elected()).
	Elected <-chan struct{}
	// Port is the listener's port once it serves, 0 before.
	Port func() int
	// Ready reports whether the listener has its consumers.
	Ready func() bool
	// Poll is how often Ready and failed writes are retried.
	Poll time.Duration
	// Recheck is how often the leader reads the slice back and writes it
	// again if it no longer names this replica as ready (deleted with a
	// recreated Service, edited by hand).
	Recheck time.Duration
	Log     logr.Logger
}

// NeedLeaderElection is false: see Publisher.
func (p *Publisher) NeedLeaderElection() bool { return false }

// SliceName is the name of the slice the leader keeps for a Service.
func SliceName(service string) string { return service + "-leader" }

// Start publishes once elected and ready, and withdraws when ctx ends.
func (p *Publisher) Start(ctx context.Context) error {
	select {
	case <-p.Elected:
	case <-ctx.Done():
		return nil
	}
	if !p.publishWhenReady(ctx) {
		return nil
	}
	p.keep(ctx)
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), withdrawTimeout)
	defer cancel()
	if err := p.withdraw(wctx); err != nil {
		p.Log.Error(err, "marking this replica's endpoint not ready; the next leader replaces it")
		return nil
	}
	p.Log.Info("the listener's Service no longer routes to this replica", "service", p.Service)
	return nil
}

// publishWhenReady waits for the listener's consumers and writes the
// slice, retrying failed writes; false when ctx ended first.
func (p *Publisher) publishWhenReady(ctx context.Context) bool {
	for {
		if p.Ready() && p.Port() > 0 {
			err := p.publish(ctx)
			if err == nil {
				p.Log.Info("the listener's Service routes to this replica", "service", p.Service, "ip", p.IP)
				return true
			}
			p.Log.Error(err, "pointing the listener's Service at this replica")
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(p.Poll):
		}
	}
}

// keep rewrites the slice whenever it stops naming this replica as
// ready, until ctx ends.
func (p *Publisher) keep(ctx context.Context) {
	if p.Recheck <= 0 {
		<-ctx.Done()
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(p.Recheck):
		}
		s := &discoveryv1.EndpointSlice{}
		err := p.Reader.Get(ctx, types.NamespacedName{Namespace: p.Service.Namespace, Name: SliceName(p.Service.Name)}, s)
		if err == nil && Names(s, p.IP) && isReady(s.Endpoints[0]) && ctx.Err() == nil {
			continue
		}
		if ctx.Err() != nil {
			return
		}
		if err := p.publish(ctx); err != nil {
			p.Log.Error(err, "pointing the listener's Service at this replica again")
			continue
		}
		p.Log.Info("the listener's EndpointSlice had changed; it names this replica again", "service", p.Service)
	}
}

func isReady(e discoveryv1.Endpoint) bool { return e.Conditions.Ready != nil && *e.Conditions.Ready }

// publish writes the slice with this replica as its one ready endpoint.
func (p *Publisher) publish(ctx context.Context) error {
	svc := &corev1.Service{}
	if err := p.Reader.Get(ctx, p.Service, svc); err != nil {
		return fmt.Errorf("reading the listener's Service %s: %w", p.Service, err)
	}
	if len(svc.Spec.Selector) > 0 {
		return fmt.Errorf("the listener's Service %s has a selector: Kubernetes keeps its endpoints, remove the selector", p.Service)
	}
	if len(svc.Spec.Ports) == 0 {
		return fmt.Errorf("the listener's Service %s has no port", p.Service)
	}
	want := p.slice(svc)
	have := &discoveryv1.EndpointSlice{}
	err := p.Reader.Get(ctx, client.ObjectKeyFromObject(want), have)
	switch {
	case apierrors.IsNotFound(err):
		if err := p.Client.Create(ctx, want); err != nil {
			return fmt.Errorf("creating EndpointSlice %s: %w", want.Name, err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("reading EndpointSlice %s: %w", want.Name, err)
	}
	have.Labels, have.OwnerReferences = want.Labels, want.OwnerReferences
	have.AddressType, have.Endpoints, have.Ports = want.AddressType, want.Endpoints, want.Ports
	if err := p.Client.Update(ctx, have); err != nil {
		return fmt.Errorf("updating EndpointSlice %s: %w", want.Name, err)
	}
	return nil
}

func (p *Publisher) slice(svc *corev1.Service) *discoveryv1.EndpointSlice {
	addressType := discoveryv1.AddressTypeIPv4
	if p.IP.Is6() {
		addressType = discoveryv1.AddressTypeIPv6
	}
	yes, no := true, false
	port := int32(p.Port()) //nolint:gosec // a TCP port
	protocol := corev1.ProtocolTCP
	name := svc.Spec.Ports[0].Name
	return &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: p.Service.Namespace, Name: SliceName(p.Service.Name),
			Labels:          map[string]string{discoveryv1.LabelServiceName: p.Service.Name, discoveryv1.LabelManagedBy: ManagedBy},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Service", Name: svc.Name, UID: svc.UID}},
		},
		AddressType: addressType,
		Endpoints: []discoveryv1.Endpoint{{
			Addresses:  []string{p.IP.String()},
			Conditions: discoveryv1.EndpointConditions{Ready: &yes, Serving: &yes, Terminating: &no},
		}},
		Ports: []discoveryv1.EndpointPort{{Name: &name, Port: &port, Protocol: &protocol}},
	}
}

// withdraw marks this replica's endpoint not ready while the slice still
// names it; a conflict means another replica wrote it since, and wins.
func (p *Publisher) withdraw(ctx context.Context) error {
	s := &discoveryv1.EndpointSlice{}
	err := p.Reader.Get(ctx, types.NamespacedName{Namespace: p.Service.Namespace, Name: SliceName(p.Service.Name)}, s)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading the EndpointSlice: %w", err)
	}
	if !Names(s, p.IP) {
		return nil
	}
	yes, no := true, false
	for i := range s.Endpoints {
		s.Endpoints[i].Conditions = discoveryv1.EndpointConditions{Ready: &no, Serving: &yes, Terminating: &yes}
	}
	if err := p.Client.Update(ctx, s); err != nil {
		if apierrors.IsConflict(err) {
			return nil
		}
		return fmt.Errorf("updating the EndpointSlice: %w", err)
	}
	return nil
}

// Names reports whether the slice's endpoints are exactly ip.
func Names(s *discoveryv1.EndpointSlice, ip netip.Addr) bool {
	return len(s.Endpoints) == 1 && len(s.Endpoints[0].Addresses) == 1 && s.Endpoints[0].Addresses[0] == ip.String()
}

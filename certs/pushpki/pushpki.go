package pushpki

import (
	"context"
	"errors"
	"fmt"
	"net"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/certs/config"
	"github.com/lifecycle-manager/certs/denylist"
	"github.com/lifecycle-manager/certs/issuer"
	"github.com/lifecycle-manager/certs/issuer/builtin"
	"github.com/lifecycle-manager/certs/issuer/certmanager"
	"github.com/lifecycle-manager/certs/metrics"
	"github.com/lifecycle-manager/certs/rotation"
	"github.com/lifecycle-manager/certs/runtimesync"
	"github.com/lifecycle-manager/certs/tlssecret"
	"github.com/lifecycle-manager/certs/trust"
)

// LocalIP is in every agent certificate, for agents run on a laptop.
var LocalIP = net.IPv4(127, 0, 0, 1)

// PKI is the push-path PKI of the KCP.
type PKI struct {
	Options config.Options
	Backend issuer.Backend
	Rotator *rotation.Rotator
	Syncer  *runtimesync.Syncer
	Metrics *metrics.Metrics

	c client.Client
}

// AddToScheme adds what the PKI's client must know besides client-go's
// types: the Kyma API and cert-manager's v1 types.
func AddToScheme(s *runtime.Scheme) error {
	return errors.Join(v1beta2.AddToScheme(s), cmv1.AddToScheme(s))
}

// New validates opts and builds the PKI on the KCP client c (the manager's
// client is right: reads may come from its cache). Metrics go to reg; a nil
// reg records none.
func New(c client.Client, opts config.Options, reg prometheus.Registerer, log logr.Logger) (*PKI, error) {
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("certificate options: %w", err)
	}
	var m *metrics.Metrics
	if reg != nil {
		var err error
		if m, err = metrics.New(reg); err != nil {
			return nil, err
		}
	}
	p := &PKI{Options: opts, Metrics: m, c: c}
	switch opts.Backend {
	case config.BackendCertManager:
		p.Backend = certmanager.New(c, opts, m, log.WithName("cert-manager"))
	default:
		p.Backend = builtin.New(c, opts, m, log.WithName("builtin"))
	}
	p.Rotator = rotation.New(c, p.Backend, kymaAgents{p}, opts, m, log.WithName("rotation"))
	p.Syncer = runtimesync.New(opts.RuntimeNamespace, opts.RuntimeSecret, m)
	return p, nil
}

// AddToManager runs the Rotator in mgr, on the leader only.
func (p *PKI) AddToManager(mgr manager.Manager) error {
	if err := mgr.Add(p.Rotator); err != nil {
		return fmt.Errorf("adding the certificate rotator: %w", err)
	}
	return nil
}

// ClientSecretKey is the KCP Secret of a Kyma's agent certificate:
// <kyma>-webhook-tls in the Kyma's namespace.
func ClientSecretKey(kyma *v1beta2.Kyma) types.NamespacedName {
	return types.NamespacedName{Namespace: kyma.Namespace, Name: config.ClientSecretName(kyma.Name)}
}

// AgentRequest is the agent certificate of a Kyma: CN = runtime ID (the
// kyma-project.io/runtime-id label, else the Kyma's name), DNS names of the
// agent Service and, with DomainSANs, the skr-domain annotation, IP
// 127.0.0.1; client and server usage. The Kyma owns the Secret.
func (p *PKI) AgentRequest(kyma *v1beta2.Kyma) (issuer.Request, error) {
	runtimeID := kyma.RuntimeID()
	if runtimeID == "" {
		runtimeID = kyma.Name
	}
	dns := p.Options.AgentDNSNames()
	if domain := kyma.Annotations[shared.SKRDomainAnnotation]; p.Options.DomainSANs && domain != "" {
		if errs := validation.IsDNS1123Subdomain(domain); len(errs) > 0 {
			return issuer.Request{}, fmt.Errorf("kyma %s/%s: annotation %s=%q is not a DNS name: %v",
				kyma.Namespace, kyma.Name, shared.SKRDomainAnnotation, domain, errs)
		}
		dns = append(dns, domain)
	}
	return issuer.Request{
		Secret:     ClientSecretKey(kyma),
		Owner:      kyma,
		Purpose:    issuer.PurposeAgent,
		CommonName: runtimeID,
		DNSNames:   dns,
		IPs:        []net.IP{LocalIP},
		Labels:     agentLabels(kyma, runtimeID),
		// A certificate on the deny list is replaced at once, so that its
		// runtime keeps working while the leaked one is refused.
		Denied: p.Rotator.DenyList().Denied,
	}, nil
}

// agentLabels name the Kyma, its runtime and, in a sharded operator, its
// shard: the shard's cache holds only Secrets labelled for it.
func agentLabels(kyma *v1beta2.Kyma, runtimeID string) map[string]string {
	labels := map[string]string{shared.KymaNameLabel: kyma.Name, shared.RuntimeIDLabel: runtimeID}
	if s := kyma.Labels[shared.ShardLabel]; s != "" {
		labels[shared.ShardLabel] = s
	}
	return labels
}

// EnsureKyma keeps the Kyma's agent certificate Secret current: issued,
// renewed, re-issued on identity change, CA rotation or deletion, with the
// current trust bundle. Result.Material is what SyncRuntime takes; when
// Result.Pending, call again (cert-manager is issuing).
func (p *PKI) EnsureKyma(ctx context.Context, kyma *v1beta2.Kyma) (issuer.Result, error) {
	req, err := p.AgentRequest(kyma)
	if err != nil {
		return issuer.Result{}, err
	}
	res, err := p.Backend.Ensure(ctx, req)
	if err != nil {
		p.Metrics.Failed(metrics.OperationIssue)
		return issuer.Result{}, err
	}
	return res, nil
}

// RemoveKyma deletes the Kyma's agent certificate Secret and what the
// backend made for it.
func (p *PKI) RemoveKyma(ctx context.Context, kyma *v1beta2.Kyma) error {
	if err := p.Backend.Remove(ctx, ClientSecretKey(kyma)); err != nil {
		p.Metrics.Failed(metrics.OperationRemove)
		return err
	}
	return nil
}

// SyncRuntime applies m as the agent's TLS Secret in the runtime reached by
// runtime, and reports whether it wrote.
func (p *PKI) SyncRuntime(ctx context.Context, runtime client.Client, m tlssecret.Material) (bool, error) {
	return p.Syncer.Apply(ctx, runtime, m)
}

// EndpointMaterial reads the event endpoint's server certificate with the
// trust bundle (load it with Material.KeyPair and Material.Bundle).
func (p *PKI) EndpointMaterial(ctx context.Context) (tlssecret.Material, error) {
	return tlssecret.Read(ctx, p.c, types.NamespacedName{Namespace: p.Options.EndpointNamespace, Name: p.Options.EndpointSecret})
}

// TrustBundle reads the trust bundle PEM.
func (p *PKI) TrustBundle(ctx context.Context) ([]byte, error) {
	st, err := trust.NewStore(p.c, types.NamespacedName{Namespace: p.Options.Namespace, Name: p.Options.BundleSecret}, p.Options.TrustedCAFingerprints...).Load(ctx)
	if err != nil {
		return nil, err
	}
	return st.PEM(), nil
}

// LoadDenyList reads the deny list Secret of leaked certificates
// (Options.DenySecret) into list, for a listener's
// Config.DeniedCertificates, and reports whether it changed. Without a
// configured Secret it does nothing; a list that does not parse is an
// error and leaves list as it was.
func (p *PKI) LoadDenyList(ctx context.Context, list *denylist.List) (bool, error) {
	key, ok := rotation.DenySecretKey(p.Options)
	if !ok {
		return false, nil
	}
	return rotation.LoadDenyList(ctx, p.c, key, list)
}

// kymaAgents lists the agent requests of every Kyma for the rotator.
type kymaAgents struct{ p *PKI }

func (a kymaAgents) AgentRequests(ctx context.Context) ([]issuer.Request, error, error) {
	var kymas v1beta2.KymaList
	if err := a.p.c.List(ctx, &kymas, client.InNamespace(a.p.Options.KymaNamespace)); err != nil {
		return nil, nil, fmt.Errorf("listing kymas: %w", err)
	}
	reqs := make([]issuer.Request, 0, len(kymas.Items))
	var skipped []error
	for i := range kymas.Items {
		k := &kymas.Items[i]
		if !k.DeletionTimestamp.IsZero() || shared.IsEnabled(k.Labels, shared.SkipReconciliationLabel) {
			continue
		}
		req, err := a.p.AgentRequest(k)
		if err != nil {
			skipped = append(skipped, err)
			continue
		}
		reqs = append(reqs, req)
	}
	return reqs, errors.Join(skipped...), nil
}

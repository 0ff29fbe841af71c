package conversion

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/certs/issuer"
)

// FieldOwner is the field manager of the caBundles the Keeper writes.
const FieldOwner = "kcp-operator-conversion"

// Keeper keeps the webhook's certificate Secret current and each converted
// CRD's caBundle equal to the trust bundle. It runs on the leader.
type Keeper struct {
	// Issuer issues Request: the push path's PKI backend.
	Issuer  issuer.Issuer
	Request issuer.Request
	// Reader reads CRDs from the API server (the manager's cache holds
	// none); Writer patches them.
	Reader client.Reader
	Writer client.Client
	Target Target
	// CRDs are the names of the CRDs whose conversion calls Target.
	CRDs []string
	// Interval between passes; a failed pass is retried sooner.
	Interval time.Duration
	Log      logr.Logger
}

// CertRequest is the webhook's serving certificate: a server certificate
// for t's names, from the CA the rotation gives servers (as the listener's),
// into secret.
func CertRequest(secret types.NamespacedName, t Target) issuer.Request {
	dns, ips := t.CertNames()
	req := issuer.Request{Secret: secret, Purpose: issuer.PurposeEndpoint, DNSNames: dns, IPs: ips}
	if len(dns) > 0 {
		req.CommonName = dns[0]
	} else if len(ips) > 0 {
		req.CommonName = ips[0].String()
	}
	return req
}

// Status is what one pass found.
type Status struct {
	// Injected are the CRDs whose caBundle was written; Current those
	// already right; Unconfigured those whose conversion does not call
	// Target (run kcp-operator --upgrade-crds with the same --webhook-*
	// flags): their v1beta1 is unserved or calls someone else.
	Injected, Current, Unconfigured []string
	// Pending is true while the PKI has not delivered a certificate.
	Pending bool
}

// NeedLeaderElection runs the Keeper on the leader only: it writes.
func (k *Keeper) NeedLeaderElection() bool { return true }

// Start runs Reconcile until ctx ends; errors are logged and retried.
func (k *Keeper) Start(ctx context.Context) error {
	retry, reported := time.Second, ""
	for ctx.Err() == nil {
		wait := k.Interval
		st, err := k.Reconcile(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			k.Log.Error(err, "conversion webhook certificate")
			wait, retry = min(retry, k.Interval), min(retry*2, k.Interval)
		case st.Pending:
			wait = min(retry, k.Interval)
		default:
			retry = time.Second
		}
		if err == nil && fmt.Sprint(st.Unconfigured) != reported {
			reported = fmt.Sprint(st.Unconfigured)
			if len(st.Unconfigured) > 0 {
				k.Log.Info("these CRDs do not convert through this webhook, so their v1beta1 is not served by it: run kcp-operator --upgrade-crds with the same --webhook-* flags",
					"crds", st.Unconfigured, "webhook", k.Target.String())
			}
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
	}
	return nil
}

// Reconcile issues or renews the certificate and writes the trust bundle
// into the caBundle of every CRD that calls Target.
func (k *Keeper) Reconcile(ctx context.Context) (Status, error) {
	res, err := k.Issuer.Ensure(ctx, k.Request)
	if err != nil {
		return Status{}, fmt.Errorf("issuing the webhook certificate into %s: %w", k.Request.Secret, err)
	}
	if res.Issued {
		k.Log.Info("issued the conversion webhook certificate", "secret", k.Request.Secret, "reason", res.Reason, "notAfter", res.NotAfter)
	}
	st := Status{Pending: res.Pending}
	if len(res.Material.CABundle) == 0 {
		st.Pending = true
		return st, nil
	}
	var errs []error
	for _, name := range k.CRDs {
		injected, configured, err := k.inject(ctx, name, res.Material.CABundle)
		switch {
		case err != nil:
			errs = append(errs, err)
		case !configured:
			st.Unconfigured = append(st.Unconfigured, name)
		case injected:
			st.Injected = append(st.Injected, name)
			k.Log.Info("conversion webhook caBundle written", "crd", name)
		default:
			st.Current = append(st.Current, name)
		}
	}
	return st, errors.Join(errs...)
}

// inject writes bundle as the caBundle of the CRD name if its conversion
// calls Target; a concurrent change of the CRD fails it (optimistic lock).
func (k *Keeper) inject(ctx context.Context, name string, bundle []byte) (injected, configured bool, err error) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := k.Reader.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
		return false, false, fmt.Errorf("reading CRD %s: %w", name, err)
	}
	conv := crd.Spec.Conversion
	if conv == nil || conv.Strategy != apiextensionsv1.WebhookConverter || conv.Webhook == nil || !k.Target.Calls(conv.Webhook.ClientConfig) {
		return false, false, nil
	}
	if bytes.Equal(conv.Webhook.ClientConfig.CABundle, bundle) {
		return false, true, nil
	}
	patch := client.MergeFromWithOptions(crd.DeepCopy(), client.MergeFromWithOptimisticLock{})
	conv.Webhook.ClientConfig.CABundle = bytes.Clone(bundle)
	if err := k.Writer.Patch(ctx, crd, patch, client.FieldOwner(FieldOwner)); err != nil {
		return false, true, fmt.Errorf("writing the caBundle of CRD %s: %w", name, err)
	}
	return true, true, nil
}

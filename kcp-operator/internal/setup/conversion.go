package setup

import (
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/lifecycle-manager/kcp-operator/internal/conversion"
	"github.com/lifecycle-manager/kcp-operator/internal/options"
)

// Intervals of the conversion webhook's certificate: the Loader rereads the
// Secret on every replica; the Keeper renews it and follows the trust
// bundle into the CRDs' caBundle, well within the CA rotation's
// propagation delay.
const (
	webhookLoadInterval = 10 * time.Second
	webhookKeepInterval = 30 * time.Second
)

// addConversionWebhook serves the v1beta1 API's conversion webhook
// (internal/conversion) when --webhook-bind-address is set; its
// certificate comes from the push path's PKI, in --cert-namespace.
func addConversionWebhook(mgr manager.Manager, opts options.Options, push *pushPath, certNamespace string, log logr.Logger) error {
	if opts.Webhook.Addr == "" {
		return nil
	}
	target, _, err := opts.Webhook.Target()
	if err != nil {
		return err
	}
	if push == nil {
		return fmt.Errorf("--webhook-bind-address needs the push path's PKI")
	}
	names, err := conversion.ConvertedCRDs()
	if err != nil {
		return err
	}
	cert := &conversion.Certificate{}
	srv, err := conversion.NewServer(opts.Webhook.Addr, cert)
	if err != nil {
		return err
	}
	secret := types.NamespacedName{Namespace: certNamespace, Name: opts.Webhook.Secret}
	log = log.WithName("conversion-webhook")
	runnables := []manager.Runnable{
		srv,
		&conversion.Loader{Reader: mgr.GetAPIReader(), Secret: secret, Certificate: cert, Interval: webhookLoadInterval, Log: log},
		&conversion.Keeper{
			Issuer: push.pki.Backend, Request: conversion.CertRequest(secret, target),
			Reader: mgr.GetAPIReader(), Writer: mgr.GetClient(), Target: target, CRDs: names,
			Interval: webhookKeepInterval, Log: log,
		},
	}
	for _, r := range runnables {
		if err := mgr.Add(r); err != nil {
			return fmt.Errorf("adding the conversion webhook: %w", err)
		}
	}
	return nil
}

package conversion_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/lifecycle-manager/api/config/crd"
	"github.com/lifecycle-manager/api/testenv"
	"github.com/lifecycle-manager/api/v1beta1"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/certs/config"
	"github.com/lifecycle-manager/certs/pushpki"
	"github.com/lifecycle-manager/kcp-operator/internal/conversion"
	"github.com/lifecycle-manager/kcp-operator/internal/crdupgrade"
)

const (
	pkiNamespace = "kcp-system"
	timeout      = 30 * time.Second
	tick         = 50 * time.Millisecond
)

var svcKey = types.NamespacedName{Namespace: pkiNamespace, Name: "kcp-operator-webhook-tls"}

// fixture is a KCP whose CRDs convert through a real webhook server on
// loopback, with its certificate from the built-in PKI, configured the
// way --upgrade-crds and the operator do it.
type fixture struct {
	env    *testenv.Env
	pki    *pushpki.PKI
	keeper *conversion.Keeper
	loader *conversion.Loader
	target conversion.Target
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := t.Context()
	env := testenv.New(t, testenv.Options{})
	f := &fixture{env: env}
	for _, ns := range []string{pkiNamespace, "kyma-system"} {
		require.NoError(t, env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	}
	opts := config.Defaults()
	opts.Namespace = pkiNamespace
	// A rotation's steps in seconds: the rotation subtest waits for them.
	opts.PropagationDelay, opts.GracePeriod = time.Second, 2*time.Second
	var err error
	f.pki, err = pushpki.New(env.Client, opts, nil, testr.New(t))
	require.NoError(t, err)
	_, err = f.pki.Rotator.Reconcile(ctx) // the first CA and the trust bundle
	require.NoError(t, err)

	port := freePort(t)
	cert := &conversion.Certificate{}
	srv, err := conversion.NewServer(fmt.Sprintf("127.0.0.1:%d", port), cert)
	require.NoError(t, err)
	srvCtx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Start(srvCtx) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("the webhook server: %v", err)
		}
	})

	f.target, err = conversion.ParseTarget(fmt.Sprintf("https://127.0.0.1:%d%s", port, conversion.Path))
	require.NoError(t, err)
	crds, err := crd.All()
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"kymas.operator.kyma-project.io", "moduletemplates.operator.kyma-project.io",
		"manifests.operator.kyma-project.io"}, conversion.Configure(crds, f.target))
	_, err = crdupgrade.Upgrade(ctx, env.Client, crds, testr.New(t))
	require.NoError(t, err)

	names, err := conversion.ConvertedCRDs()
	require.NoError(t, err)
	f.keeper = &conversion.Keeper{
		Issuer: f.pki.Backend, Request: conversion.CertRequest(svcKey, f.target),
		Reader: env.Client, Writer: env.Client, Target: f.target, CRDs: names, Interval: time.Second, Log: testr.New(t),
	}
	st, err := f.keeper.Reconcile(ctx)
	require.NoError(t, err)
	require.Len(t, st.Injected, 3, "every converted CRD gets the caBundle")
	f.loader = &conversion.Loader{Reader: env.Client, Secret: svcKey, Certificate: cert, Interval: time.Second, Log: testr.New(t)}
	require.NoError(t, f.loader.Load(ctx))
	return f
}

// TestV1beta1IsNotServedWithoutTheWebhook: the CRDs as generated leave
// v1beta1 unserved, so that a v1beta1 write fails instead of losing
// spec.sync to the v1beta2 schema.
func TestV1beta1IsNotServedWithoutTheWebhook(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	kyma := sample(t, "kyma-v1beta1.yaml")
	kyma.SetNamespace("default")
	err := env.Client.Create(t.Context(), kyma)
	require.Error(t, err, "v1beta1 must not be served without the conversion webhook")
	var list v1beta2.KymaList
	require.NoError(t, env.Client.List(t.Context(), &list))
	assert.Empty(t, list.Items)
}

func TestV1beta1ThroughTheWebhook(t *testing.T) {
	f := newFixture(t)
	t.Run("the documentation's Kyma reads back as v1beta2 and as itself", f.documentationKyma)
	t.Run("v1beta2 writes show through v1beta1 and survive a v1beta1 update", f.bothClientsWrite)
	t.Run("the documentation's ModuleTemplate converts both ways", f.documentationTemplate)
	t.Run("a v1beta1 Manifest obeys v1beta2's rules", f.manifest)
	t.Run("v1beta2 fields carried in the annotation obey v1beta2's rules", f.annotationFields)
	t.Run("the caBundle follows a CA rotation", f.rotation)
	t.Run("a CRD that calls another webhook is left alone", f.otherWebhook)
}

func (f *fixture) documentationKyma(t *testing.T) {
	ctx := t.Context()
	applied := sample(t, "kyma-v1beta1.yaml")
	eventually(t, func() error { return f.env.Client.Create(ctx, applied.DeepCopy()) })

	hub := &v1beta2.Kyma{}
	require.NoError(t, f.env.Client.Get(ctx, client.ObjectKeyFromObject(applied), hub))
	assert.Equal(t, "alpha", hub.Spec.Channel)
	require.Len(t, hub.Spec.Modules, 2)
	assert.Equal(t, "regular", hub.Spec.Modules[0].Channel)
	assert.True(t, hub.Spec.Modules[0].IsManaged(), "v1beta2's defaults apply")
	assert.Equal(t, "custom-sync-namespace", hub.Annotations["operator.kyma-project.io/sync-namespace"])
	assert.JSONEq(t, `{"sync":{"enabled":true,"strategy":"secret","namespace":"custom-sync-namespace","moduleCatalog":true,"noModuleCopy":true}}`,
		hub.Annotations[v1beta1.V1beta1SpecAnnotation])

	back := v1beta1Object(applied)
	require.NoError(t, f.env.Client.Get(ctx, client.ObjectKeyFromObject(applied), back))
	assert.Equal(t, applied.Object["spec"].(map[string]any)["sync"], back.Object["spec"].(map[string]any)["sync"])
	assert.Empty(t, back.GetAnnotations(), "nothing of the conversion shows in v1beta1")
}

func (f *fixture) bothClientsWrite(t *testing.T) {
	ctx := t.Context()
	key := types.NamespacedName{Namespace: "kyma-system", Name: "my-kyma"}
	hub := &v1beta2.Kyma{}
	require.NoError(t, f.env.Client.Get(ctx, key, hub))
	hub.Spec.SkipMaintenanceWindows = true
	hub.Spec.Modules[1].Managed = new(bool)
	require.NoError(t, f.env.Client.Update(ctx, hub))
	hub.Status.State = "Ready"
	require.NoError(t, f.env.Client.Status().Update(ctx, hub))

	old := v1beta1Object(sample(t, "kyma-v1beta1.yaml"))
	require.NoError(t, f.env.Client.Get(ctx, key, old))
	assert.Equal(t, "Ready", old.Object["status"].(map[string]any)["state"])
	assert.JSONEq(t, `{"skipMaintenanceWindows":true,"modules":[{"name":"serverless","managed":false}]}`,
		old.GetAnnotations()[v1beta1.V1beta2SpecAnnotation])
	require.NoError(t, unstructured.SetNestedField(old.Object, "fast", "spec", "channel"))
	require.NoError(t, f.env.Client.Update(ctx, old))

	require.NoError(t, f.env.Client.Get(ctx, key, hub))
	assert.Equal(t, "fast", hub.Spec.Channel)
	assert.True(t, hub.Spec.SkipMaintenanceWindows, "a v1beta1 update keeps what only v1beta2 has")
	assert.False(t, hub.Spec.Modules[1].IsManaged())
	assert.NotContains(t, hub.Annotations, v1beta1.V1beta2SpecAnnotation)
	assert.Contains(t, hub.Annotations, v1beta1.V1beta1SpecAnnotation)
}

func (f *fixture) documentationTemplate(t *testing.T) {
	ctx := t.Context()
	applied := sample(t, "moduletemplate-v1beta1.yaml")
	eventually(t, func() error { return f.env.Client.Create(ctx, applied.DeepCopy()) })

	hub := &v1beta2.ModuleTemplate{}
	require.NoError(t, f.env.Client.Get(ctx, client.ObjectKeyFromObject(applied), hub))
	assert.Equal(t, "regular", hub.Spec.Channel)
	assert.JSONEq(t, `{"component":{"name":"kyma-project.io/module/sample"}}`, string(hub.Spec.Descriptor.Raw))
	assert.Equal(t, "Keda", hub.Spec.Data.GetKind())
	assert.JSONEq(t, `{"target":"control-plane"}`, hub.Annotations[v1beta1.V1beta1SpecAnnotation])

	back := v1beta1Object(applied)
	require.NoError(t, f.env.Client.Get(ctx, client.ObjectKeyFromObject(applied), back))
	assert.Equal(t, applied.Object["spec"], back.Object["spec"])
}

func (f *fixture) manifest(t *testing.T) {
	ctx := t.Context()
	m := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1beta1.GroupVersion.String(), "kind": "Manifest",
		"metadata": map[string]any{"name": "manifest-sample", "namespace": "default", "labels": map[string]any{"operator.kyma-project.io/kyma-name": "kyma-sample"}},
		"spec": map[string]any{"remote": false, "install": map[string]any{"name": "keda", "source": map[string]any{
			"name": "kyma-project.io/module/keda", "repo": "registry.example.com/modules", "ref": "sha256:8f92", "type": "oci-ref"}}},
	}}
	err := f.env.Client.Create(ctx, m.DeepCopy())
	require.ErrorContains(t, err, "spec.remote: false", "the v1beta1 schema refuses what v1beta2 refuses")

	require.NoError(t, unstructured.SetNestedField(m.Object, true, "spec", "remote"))
	eventually(t, func() error { return f.env.Client.Create(ctx, m.DeepCopy()) })
	hub := &v1beta2.Manifest{}
	require.NoError(t, f.env.Client.Get(ctx, client.ObjectKeyFromObject(m), hub))
	assert.True(t, hub.Spec.Remote)
	assert.Equal(t, "keda", hub.Spec.Install.Name)
}

// annotationFields: a v1beta1 write passes the v1beta1 schema, in which
// the annotation is any string; what it carries into v1beta2 must pass
// the v1beta2 schema, or a non-semver version would be stored and skip
// the downgrade guard.
func (f *fixture) annotationFields(t *testing.T) {
	ctx := t.Context()
	tmpl := sample(t, "moduletemplate-v1beta1.yaml")
	tmpl.SetName("carried-version")
	tmpl.SetAnnotations(map[string]string{v1beta1.V1beta2SpecAnnotation: `{"version":"latest","moduleName":"sample"}`})
	var err error
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		err = f.env.Client.Create(ctx, tmpl.DeepCopy())
		assert.ErrorContains(c, err, "spec.version")
	}, timeout, tick, "a non-semver version through v1beta1 is refused")
	assert.ErrorContains(t, err, v1beta1.V1beta2SpecAnnotation)
	assert.NotContains(t, err.Error(), "moduleName", "only the broken field is named")

	tmpl.SetAnnotations(map[string]string{v1beta1.V1beta2SpecAnnotation: `{"version":"1.2.3","moduleName":"sample"}`})
	eventually(t, func() error { return f.env.Client.Create(ctx, tmpl.DeepCopy()) })
	hub := &v1beta2.ModuleTemplate{}
	require.NoError(t, f.env.Client.Get(ctx, client.ObjectKeyFromObject(tmpl), hub))
	assert.Equal(t, "1.2.3", hub.Spec.Version)
	assert.Equal(t, "sample", hub.Spec.ModuleName)

	back := v1beta1Object(tmpl)
	require.NoError(t, f.env.Client.Get(ctx, client.ObjectKeyFromObject(tmpl), back))
	require.NoError(t, unstructured.SetNestedField(back.Object, "regular", "spec", "channel"))
	back.SetAnnotations(map[string]string{v1beta1.V1beta2SpecAnnotation: `{"version":"2.0"}`})
	assert.ErrorContains(t, f.env.Client.Update(ctx, back), "spec.version", "an update through v1beta1 too")
}

// rotation: a certificate from a CA that the CRD's caBundle lacks is what
// the API server would refuse; the Keeper's pass puts the new bundle in.
func (f *fixture) rotation(t *testing.T) {
	ctx := t.Context()
	firstCA := servedIssuer(t, f)
	_, err := f.pki.Rotator.Rotate(ctx)
	require.NoError(t, err)
	// After the grace period the server CA is the new one: the certificate
	// is issued again, and loaded, but the caBundle was not updated.
	require.Eventually(t, func() bool {
		_, _ = f.pki.Rotator.Reconcile(ctx)
		res, err := f.pki.Backend.Ensure(ctx, f.keeper.Request)
		return err == nil && res.Issued
	}, timeout, 100*time.Millisecond)
	require.NoError(t, f.loader.Load(ctx))
	assert.NotEqual(t, firstCA, servedIssuer(t, f), "the certificate comes from the new CA")
	assert.ErrorContains(t, dialWithCABundle(t, f), "certificate signed by unknown authority")

	st, err := f.keeper.Reconcile(ctx)
	require.NoError(t, err)
	assert.Len(t, st.Injected, 3)
	require.NoError(t, dialWithCABundle(t, f))
	kyma := v1beta1Object(sample(t, "kyma-v1beta1.yaml"))
	eventually(t, func() error { return f.env.Client.Get(ctx, client.ObjectKeyFromObject(kyma), kyma) })
}

func (f *fixture) otherWebhook(t *testing.T) {
	other, err := conversion.ParseTarget("https://127.0.0.2:1/convert")
	require.NoError(t, err)
	k := *f.keeper
	k.Target = other
	st, err := k.Reconcile(t.Context())
	require.NoError(t, err)
	assert.Len(t, st.Unconfigured, 3)
	assert.Empty(t, st.Injected)
}

// servedIssuer is the issuer of the certificate the webhook serves.
func servedIssuer(t *testing.T, f *fixture) string {
	t.Helper()
	d := tls.Dialer{Config: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // reads the certificate only
	conn, err := d.DialContext(t.Context(), "tcp", f.target.URL.Host)
	require.NoError(t, err)
	issuer := conn.(*tls.Conn).ConnectionState().PeerCertificates[0].Issuer.String()
	require.NoError(t, conn.Close())
	return issuer
}

// dialWithCABundle connects as the API server does: trusting the Kyma
// CRD's caBundle, verifying the URL's host.
func dialWithCABundle(t *testing.T, f *fixture) error {
	t.Helper()
	c := &apiextensionsv1.CustomResourceDefinition{}
	require.NoError(t, f.env.Client.Get(t.Context(), client.ObjectKey{Name: "kymas.operator.kyma-project.io"}, c))
	roots := x509.NewCertPool()
	require.True(t, roots.AppendCertsFromPEM(c.Spec.Conversion.Webhook.ClientConfig.CABundle))
	d := tls.Dialer{Config: &tls.Config{RootCAs: roots, ServerName: f.target.URL.Hostname(), MinVersion: tls.VersionTLS12}}
	conn, err := d.DialContext(t.Context(), "tcp", f.target.URL.Host)
	if err != nil {
		return err
	}
	return conn.Close()
}

func sample(t *testing.T, file string) *unstructured.Unstructured {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "api", "config", "samples", file))
	require.NoError(t, err)
	u := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal(raw, &u.Object))
	return u
}

// v1beta1Object is an empty object of u's kind in v1beta1, to read into.
func v1beta1Object(u *unstructured.Unstructured) *unstructured.Unstructured {
	out := &unstructured.Unstructured{}
	out.SetGroupVersionKind(v1beta1.GroupVersion.WithKind(u.GetKind()))
	out.SetNamespace(u.GetNamespace())
	out.SetName(u.GetName())
	return out
}

// eventually retries op while the API server takes up the new versions.
func eventually(t *testing.T, op func() error) {
	t.Helper()
	var last error
	require.Eventually(t, func() bool { last = op(); return last == nil }, timeout, tick, "last error: %v", &last)
}

func freePort(t *testing.T) int {
	t.Helper()
	var lc net.ListenConfig
	ln, err := lc.Listen(t.Context(), "tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	require.NoError(t, ln.Close())
	return port
}

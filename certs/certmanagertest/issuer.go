package certmanagertest

import (
	"context"
	"fmt"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CAIssuer creates, in namespace, what a cluster would have for a private
// CA: a self-signed Issuer <name>-selfsigned, a CA Certificate <name> of
// caDuration (renewed renewBefore ahead; zero leaves it to cert-manager)
// whose Secret is <name>, and the CA Issuer <name> signing with that Secret.
// Point the cert-manager backend at issuer <name> and CA Secret <name>.
func CAIssuer(ctx context.Context, c client.Client, namespace, name string, caDuration, renewBefore time.Duration) error {
	var renew *metav1.Duration
	if renewBefore > 0 {
		renew = &metav1.Duration{Duration: renewBefore}
	}
	objs := []client.Object{
		&cmv1.Issuer{
			ObjectMeta: metav1.ObjectMeta{Name: name + "-selfsigned", Namespace: namespace},
			Spec:       cmv1.IssuerSpec{IssuerConfig: cmv1.IssuerConfig{SelfSigned: &cmv1.SelfSignedIssuer{}}},
		},
		&cmv1.Certificate{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
			Spec: cmv1.CertificateSpec{
				IsCA: true, CommonName: name, SecretName: name,
				Duration:    &metav1.Duration{Duration: caDuration},
				RenewBefore: renew,
				IssuerRef:   cmmeta.IssuerReference{Name: name + "-selfsigned", Kind: "Issuer", Group: "cert-manager.io"},
				PrivateKey:  &cmv1.CertificatePrivateKey{Algorithm: cmv1.ECDSAKeyAlgorithm, Size: 256, RotationPolicy: cmv1.RotationPolicyAlways},
			},
		},
		&cmv1.Issuer{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
			Spec:       cmv1.IssuerSpec{IssuerConfig: cmv1.IssuerConfig{CA: &cmv1.CAIssuer{SecretName: name}}},
		},
	}
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil {
			return fmt.Errorf("creating %T %s: %w", o, o.GetName(), err)
		}
	}
	return nil
}

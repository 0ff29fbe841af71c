package trust

import (
	"bytes"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/certs/pki"
	"github.com/lifecycle-manager/certs/tlssecret"
)

// FuzzBundleSecret reads any trust-bundle Secret (its ca.crt and the
// rotation's annotations). What parses has at least one CA, answers every
// question of the rotation with a CA of the bundle, and is what the store
// writes back: a saved state loads as the same CAs, the same emergency and
// the time the newest CA joined (to the second, as it is written).
func FuzzBundleSecret(f *testing.F) {
	key, err := pki.GenerateKey(pki.ECDSAP256)
	if err != nil {
		f.Fatal(err)
	}
	now := time.Now()
	older, err := pki.NewCA("older", key, now.Add(-time.Hour), 24*time.Hour)
	if err != nil {
		f.Fatal(err)
	}
	newer, err := pki.NewCA("newer", key, now, 24*time.Hour)
	if err != nil {
		f.Fatal(err)
	}
	bundle := pki.EncodeCerts(older.Cert, newer.Cert)
	f.Add(bundle, now.Format(time.RFC3339), "", "")
	f.Add(bundle, now.Add(-time.Minute).Format(time.RFC3339Nano), now.Format(time.RFC3339Nano), Fingerprint(older.Cert))
	f.Add(pki.EncodeCerts(newer.Cert), "yesterday", "", "x")
	f.Add(bundle, "", "0001-01-01T00:00:00Z", "")
	f.Add([]byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"), "", "", "")
	timing := Timing{PropagationDelay: 5 * time.Minute, GracePeriod: time.Hour}
	f.Fuzz(func(t *testing.T, caPEM []byte, addedAt, since, replaces string) {
		secret := bundleSecret(caPEM, map[string]string{
			shared.CAAddedAtAnnotation: addedAt, EmergencySinceAnnotation: since, EmergencyReplacesAnnotation: replaces,
		})
		st, err := parse(secret)
		if err != nil {
			return
		}
		if len(st.CAs) == 0 {
			t.Fatal("a bundle without a CA parsed")
		}
		for _, at := range []time.Time{now, st.NewestAddedAt, st.NewestAddedAt.Add(timing.PropagationDelay)} {
			for _, ca := range []struct {
				name string
				idx  int
			}{{"client", st.Index(st.ClientCA(at, timing))}, {"server", st.Index(st.ServerCA(at, timing))}} {
				if ca.idx < 0 {
					t.Fatalf("the %s CA at %s is not in the bundle", ca.name, at)
				}
			}
		}
		saved := bundleSecret(nil, nil)
		fill(saved, st)
		again, err := parse(saved)
		if err != nil {
			t.Fatalf("the saved bundle does not load: %v", err)
		}
		requireSameState(t, st, again)
	})
}

func bundleSecret(caPEM []byte, annotations map[string]string) *corev1.Secret {
	nonEmpty := map[string]string{}
	for k, v := range annotations {
		if v != "" {
			nonEmpty[k] = v
		}
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "bundle", Namespace: "kcp-system", Annotations: nonEmpty},
		Data:       map[string][]byte{tlssecret.CAKey: caPEM},
	}
}

func requireSameState(t *testing.T, st, again State) {
	t.Helper()
	if len(again.CAs) != len(st.CAs) {
		t.Fatalf("%d CAs saved, %d loaded", len(st.CAs), len(again.CAs))
	}
	for i := range st.CAs {
		if !bytes.Equal(st.CAs[i].Raw, again.CAs[i].Raw) {
			t.Fatalf("CA %d changed between save and load", i)
		}
	}
	if want := st.NewestAddedAt.Truncate(time.Second); !again.NewestAddedAt.Equal(want) {
		t.Fatalf("the newest CA joined at %s, loads as %s", want, again.NewestAddedAt)
	}
	if st.Emergency.Active() != again.Emergency.Active() {
		t.Fatalf("emergency %+v saved, %+v loaded", st.Emergency, again.Emergency)
	}
	if st.Emergency.Active() && (!st.Emergency.Since.Equal(again.Emergency.Since) || st.Emergency.Replaces != again.Emergency.Replaces) {
		t.Fatalf("emergency %+v saved, %+v loaded", st.Emergency, again.Emergency)
	}
}

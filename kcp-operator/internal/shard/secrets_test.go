package shard_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/shard"
)

// A provisioner that replaces an access Secret without the shard label:
// the shard still finds it, and labels it so that its cache holds it.
func TestAReplacedSecretIsFoundAndLabelled(t *testing.T) {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "replaced-kubeconfig",
		Labels: map[string]string{shared.KymaNameLabel: "replaced"}}, Data: map[string][]byte{"config": []byte("kubeconfig")}}
	require.NoError(t, kcp.Client.Create(context.Background(), s))
	kyma := &v1beta2.Kyma{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "replaced"}}
	found, err := shard.UnlabelledSecrets(kcp.Client, kcp.Client, "sec-a")(context.Background(), kyma)
	require.NoError(t, err)
	require.Len(t, found, 1)
	assert.Equal(t, []byte("kubeconfig"), found[0].Data["config"])
	assert.Equal(t, "sec-a", labelOf(t, s))
}

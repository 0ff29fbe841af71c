package shard

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
)

// UnlabelledSecrets finds a Kyma's Secrets around the shard's cache and
// labels them for the shard, so that a Secret a provisioner replaced
// without the shard label is read now and cached from then on.
func UnlabelledSecrets(apiReader client.Reader, kcp client.Writer, shard string) func(context.Context, *v1beta2.Kyma) ([]corev1.Secret, error) {
	return func(ctx context.Context, kyma *v1beta2.Kyma) ([]corev1.Secret, error) {
		var list corev1.SecretList
		if err := apiReader.List(ctx, &list, client.InNamespace(kyma.Namespace), client.MatchingLabels{shared.KymaNameLabel: kyma.Name}); err != nil {
			return nil, fmt.Errorf("listing the Secrets of Kyma %s/%s: %w", kyma.Namespace, kyma.Name, err)
		}
		for i := range list.Items {
			s := &list.Items[i]
			if s.Labels[shared.ShardLabel] == shard {
				continue
			}
			patch := client.MergeFrom(s.DeepCopy())
			metav1.SetMetaDataLabel(&s.ObjectMeta, shared.ShardLabel, shard)
			if err := kcp.Patch(ctx, s, patch); client.IgnoreNotFound(err) != nil {
				return nil, fmt.Errorf("labelling Secret %s/%s for shard %s: %w", s.Namespace, s.Name, shard, err)
			}
		}
		return list.Items, nil
	}
}

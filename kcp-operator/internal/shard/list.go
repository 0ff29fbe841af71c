package shard

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ListKey is the key of the shard list in the ConfigMap.
const ListKey = "shards"

// ParseList reads the comma-separated shard names of a ConfigMap value.
// The first is the coordinator.
func ParseList(value string) ([]string, error) {
	var out []string
	for _, s := range strings.Split(value, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if msgs := validation.IsDNS1123Label(s); len(msgs) > 0 {
			return nil, fmt.Errorf("shard %q: %s", s, strings.Join(msgs, "; "))
		}
		if slices.Contains(out, s) {
			return nil, fmt.Errorf("shard %q is listed twice", s)
		}
		out = append(out, s)
	}
	return out, nil
}

// List is the shard list of the ConfigMap key; nil when the ConfigMap
// does not exist.
func List(ctx context.Context, r client.Reader, key client.ObjectKey) ([]string, error) {
	var cm corev1.ConfigMap
	if err := r.Get(ctx, key, &cm); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading the shard list %s: %w", key, err)
	}
	shards, err := ParseList(cm.Data[ListKey])
	if err != nil {
		return nil, fmt.Errorf("the shard list %s (key %s): %w", key, ListKey, err)
	}
	return shards, nil
}

// IsCoordinator is whether shard leads the list: it assigns Kymas and
// keeps the fleet-wide objects.
func IsCoordinator(shard string, shards []string) bool {
	return len(shards) > 0 && shards[0] == shard
}

#!/usr/bin/env bash
# On two nodes started by run.sh (INSTANCE=0 as the KCP, INSTANCE=1 as the
# runtime, both KEEP=1), installs charts/kcp-operator with Helm into the KCP
# (images from bin/images, imported by run.sh), gives it the runtime's
# kubeconfig and a Kyma, waits until the operator has installed the agent in
# the runtime (real pods, the agent's certificate Secret mounted by the
# kubelet), then changes the runtime's Kyma and times how long the KCP takes
# to see it over the push path (runtime API server -> agent webhook -> agent
# -> operator listener through a NodePort). Needs kubectl on PATH.
#
#   INSTANCE=0 KEEP=1 hack/realnode/run.sh && INSTANCE=1 KEEP=1 hack/realnode/run.sh
#   hack/realnode/charts.sh
#   INSTANCE=1 hack/realnode/run.sh stop; INSTANCE=0 hack/realnode/run.sh stop
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
OUT="${OUT:-/tmp/realnode}"
KCP="$OUT/run-realnode0/kubeconfig"
SKR="$OUT/run-realnode1/kubeconfig"
SKR_API_PORT=27443 # run.sh: 20000 + 1000 * INSTANCE + 6443
NODE_PORT=30082
HELM="${HELM:-$OUT/bin/helm}"
HOST_IP="${HOST_IP:-$(ip -4 -o addr show scope global | awk '{print $4}' | cut -d/ -f1 | head -1)}"
TOKEN=realnode-admin-token

log() { echo "charts: $(date -u +%H:%M:%S) $*" >&2; }
k() { local c="$1"; shift; kubectl --kubeconfig "$c" "$@"; }

[[ -f $KCP && -f $SKR ]] || { log "start both nodes first (see the header)"; exit 1; }
if ! [[ -x $HELM ]]; then
	log "building helm v3.22.0 from the Go module proxy"
	GOWORK=off GOBIN="$OUT/bin" CGO_ENABLED=0 nice -n 10 go install helm.sh/helm/v3/cmd/helm@v3.22.0
fi
SECONDS=0

log "installing charts/kcp-operator into the KCP (direct listener on NodePort $NODE_PORT, no Istio)"
"$HELM" --kubeconfig "$KCP" upgrade --install kcp-operator "$root/charts/kcp-operator" -n kcp-system --create-namespace \
	--set image.repository=docker.io/local/kcp-operator --set image.tag=dev --set image.pullPolicy=Never \
	--set agent.image.repository=docker.io/local/skr-agent --set agent.image.tag=dev \
	--set listener.mode=direct --set istio.enabled=false \
	--set listener.service.type=NodePort --set listener.service.nodePort=$NODE_PORT \
	--set agent.kcpAddress="$HOST_IP:$NODE_PORT" --wait --timeout 3m >/dev/null
log "operator: $(k "$KCP" -n kcp-system get deploy kcp-operator -o jsonpath='{.status.availableReplicas}/{.spec.replicas} available')"

# The runtime's kubeconfig with inline credentials and the API server's CA
# (its self-signed serving certificate names $HOST_IP).
ca="$(base64 -w0 "$OUT/run-realnode1/pki/apiserver.crt")"
cfg="$(printf 'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://%s:%s", certificate-authority-data: "%s"}}]\nusers: [{name: u, user: {token: "%s"}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n' \
	"$HOST_IP" "$SKR_API_PORT" "$ca" "$TOKEN")"
k "$KCP" apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Secret
metadata:
  name: kyma-sample-kubeconfig
  namespace: kcp-system
  labels: {operator.kyma-project.io/kyma-name: kyma-sample}
data:
  config: $(printf '%s\n' "$cfg" | base64 -w0)
---
apiVersion: operator.kyma-project.io/v1beta2
kind: Kyma
metadata:
  name: kyma-sample
  namespace: kcp-system
  labels: {kyma-project.io/runtime-id: 4f3a9c2e-1b7d-4c8a-9e6f-2d5b8a1c7e30}
spec:
  channel: regular
EOF
log "waiting for the agent in the runtime (SKRWebhook condition)"
for _ in $(seq 180); do
	[[ $(k "$KCP" -n kcp-system get kyma kyma-sample -o jsonpath='{.status.conditions[?(@.type=="SKRWebhook")].status}') == True ]] && break
	sleep 1
done
k "$KCP" -n kcp-system get kyma kyma-sample -o jsonpath='{range .status.conditions[*]}{.type}={.status} {.reason}: {.message}{"\n"}{end}' >&2
k "$SKR" -n kyma-system get pods -o wide >&2

log "changing the runtime's Kyma (channel fast) and waiting for the KCP's"
k "$SKR" -n kyma-system wait kyma/default --for=jsonpath='{.metadata.name}'=default --timeout=60s >/dev/null
t0=$(date +%s%N)
k "$SKR" -n kyma-system patch kyma default --type merge -p '{"spec":{"channel":"fast"}}' >/dev/null
seen=""
for _ in $(seq 600); do
	[[ $(k "$KCP" -n kcp-system get kyma kyma-sample -o jsonpath='{.spec.channel}') == fast ]] && { seen=1; break; }
	sleep 0.1
done
ms=$((($(date +%s%N) - t0) / 1000000))
metrics_ip="$(k "$KCP" -n kcp-system get svc kcp-operator-metrics -o jsonpath='{.spec.clusterIP}')"
curl -s -m 5 "http://$metrics_ip:8080/metrics" | grep '^listener_events_delivered_total' >&2 || true
if [[ -n $seen ]]; then
	log "the KCP's Kyma had channel fast ${ms} ms after the runtime change (kubectl polling included); setup ${SECONDS}s"
else
	log "the KCP's Kyma did not change within 60s"
	exit 1
fi

#!/usr/bin/env bash
# make e2e-node: the e2e suite's clusters mode against two real nodes on this
# machine (see docs/testing.md, "A real node on this machine"). Node 0 is the
# KCP, with charts/kcp-operator installed by Helm from the images of
# `make images`; node 1 is the runtime, where the operator installs the agent
# and the sample module, whose pods the kubelet runs. The module registry is
# e2e/cmd/registry in the KCP node's network namespace. Each node has a
# network namespace and an address of its own (net.sh); the suite, run from
# the host, talks only to those addresses.
#
#   hack/realnode/e2e.sh          up, run the suite, down (KEEP=1 leaves it all running)
#   hack/realnode/e2e.sh up       start everything; write the suite's environment to $OUT/e2e/env
#   hack/realnode/e2e.sh test     run the suite against what `up` started
#   hack/realnode/e2e.sh down     stop everything
#   hack/realnode/e2e.sh net-check  the nodes' network alone (net-check.sh)
#
# Needs root (containerd, kubelet, iptables). Builds what is missing: the
# Kubernetes binaries and the helm CLI from the Go module proxy (cached in
# $OUT/bin; ~35 min cold on 2 busy cores), Debian's containerd, runc and CNI
# plugins (run.sh installs them).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
# shellcheck source=net.sh
source "$here/net.sh"
export OUT="${OUT:-/tmp/realnode}"
BIN="$OUT/bin"
DIR="$OUT/e2e"
HELM="${HELM:-$BIN/helm}"
HELM_VERSION=v3.22.0
KCP_IP="$(node_ip 0)"
KCP_API="https://$KCP_IP:26443" # run.sh: 20000 + 1000 * INSTANCE + 6443
SKR_API="https://$(node_ip 1):27443"
TOKEN=realnode-admin-token # run.sh's admin token
NODE_PORT=30082            # the listener's NodePort in the KCP
REGISTRY="$KCP_IP:5050"
NAMESPACE=kcp-system # the harness's Namespace
KYMA_NAME=kyma-1

log() { echo "e2e-node: $(date -u +%H:%M:%S) $*" >&2; }
api() { curl -skf -H "Authorization: Bearer $TOKEN" "$@"; }

# kubeconfig NODE SERVER: an admin kubeconfig that verifies the API server
# (its self-signed certificate names the node's address).
kubeconfig() {
	local ca
	ca="$(base64 -w0 "$OUT/run-realnode$1/pki/apiserver.crt")"
	printf 'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "%s", certificate-authority-data: "%s"}}]\nusers: [{name: u, user: {token: "%s"}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n' \
		"$2" "$ca" "$TOKEN" >"$DIR/$3.kubeconfig"
}

build() {
	mkdir -p "$BIN" "$DIR"
	log "building the kcp-operator and skr-agent images (make images)"
	make -C "$root" --no-print-directory images >&2
	log "building the module registry and the sample module's operator"
	(cd "$root/e2e" && CGO_ENABLED=0 go build -trimpath -o "$BIN/" ./cmd/registry ./cmd/sample-operator)
	if ! [[ -x $HELM ]]; then
		log "building helm $HELM_VERSION from the Go module proxy"
		GOWORK=off GOBIN="$BIN" CGO_ENABLED=0 go install "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
	fi
}

# sample_images: the sample module's Deployment names
# ghcr.io/lifecycle-manager/sample-operator:<version>; the runtime node gets
# it imported (nothing is pulled here).
sample_images() {
	local sock="$OUT/run-realnode1/containerd.sock" tar="$DIR/sample-operator.tar"
	"$BIN/imagetool" -bin "$BIN/sample-operator" -path /sample-operator -user 65532 \
		-tag ghcr.io/lifecycle-manager/sample-operator:1.0.0 -out "$tar"
	ctr --address "$sock" -n k8s.io images import "$tar" >/dev/null
	ctr --address "$sock" -n k8s.io images tag --force ghcr.io/lifecycle-manager/sample-operator:1.0.0 \
		ghcr.io/lifecycle-manager/sample-operator:2.0.0 >/dev/null
}

start_registry() {
	stop_registry
	nsenter "--net=$(node_netns 0)" -- "$BIN/registry" --addr "$REGISTRY" >"$DIR/registry.log" 2>&1 &
	echo $! >"$DIR/registry.pid"
	for _ in $(seq 50); do curl -sf "http://$REGISTRY/v2/" >/dev/null && return; sleep 0.2; done
	log "the registry did not start"; cat "$DIR/registry.log" >&2; exit 1
}

stop_registry() {
	[[ -f $DIR/registry.pid ]] || return 0
	kill "$(cat "$DIR/registry.pid")" 2>/dev/null || true
	rm -f "$DIR/registry.pid"
}

# install_operator: the chart as a user installs it, with the local images,
# the listener in direct mode on a NodePort (no Istio here), the registry
# modulectl publishes the descriptors to, and the suite's timings (the flags
# the local harness gives the operator).
install_operator() {
	log "installing charts/kcp-operator into the KCP"
	"$HELM" --kubeconfig "$DIR/kcp.kubeconfig" upgrade --install kcp-operator "$root/charts/kcp-operator" \
		-n "$NAMESPACE" --create-namespace --wait --timeout 5m \
		--set image.repository=docker.io/local/kcp-operator --set image.tag=dev --set image.pullPolicy=Never \
		--set agent.image.repository=docker.io/local/skr-agent --set agent.image.tag=dev \
		--set-json "namespaces=[\"$NAMESPACE\"]" \
		--set listener.mode=direct \
		--set listener.service.type=NodePort --set listener.service.nodePort=$NODE_PORT \
		--set agent.kcpAddress="$KCP_IP:$NODE_PORT" \
		--set-json "operator.insecureRegistries=[\"$REGISTRY\"]" \
		--set operator.ociRegistryHost="$REGISTRY/modules" \
		--set-json 'operator.extraArgs=["--requeue-success=10h","--requeue-busy=2s","--requeue-error=3s",
			"--purge-grace-period=20s","--cert-propagation-delay=1250ms"]' \
		>&2
}

metrics_addr() {
	api "$KCP_API/api/v1/namespaces/$NAMESPACE/services/kcp-operator-metrics" |
		python3 -c 'import json,sys; s=json.load(sys.stdin)["spec"]; print("%s:%d" % (s["clusterIP"], s["ports"][0]["port"]))'
}

up() {
	SECONDS=0
	build
	for i in 0 1; do
		log "starting node $i ($([[ $i == 0 ]] && echo KCP || echo runtime))"
		INSTANCE=$i KEEP=1 PODS=0 "$here/run.sh"
	done
	sample_images
	kubeconfig 0 "$KCP_API" kcp
	kubeconfig 1 "$SKR_API" skr
	start_registry
	install_operator
	cat >"$DIR/env" <<-EOF
		export E2E_KCP_KUBECONFIG=$DIR/kcp.kubeconfig
		export E2E_SKR_KUBECONFIG=$DIR/skr.kubeconfig
		export E2E_SKR_SERVER=$SKR_API
		export E2E_KYMA_NAME=$KYMA_NAME
		export E2E_REGISTRY=$REGISTRY/modules
		export E2E_KCP_EVENTS_ADDR=$KCP_IP:$NODE_PORT
		export E2E_KCP_METRICS_ADDR=$(metrics_addr)
	EOF
	log "up in ${SECONDS}s; the suite's environment is in $DIR/env"
}

run_suite() {
	# Without the bridge the nodes' addresses would go to the default route.
	if ! [[ -f $DIR/env ]] || ! ip link show "$RN_BRIDGE" >/dev/null 2>&1; then log "nothing is up: run $0 up first"; exit 1; fi
	# shellcheck disable=SC1091
	source "$DIR/env"
	SECONDS=0
	local rc=0
	make -C "$root" --no-print-directory e2e || rc=$?
	log "suite finished in ${SECONDS}s (exit $rc); node logs in $OUT/run-realnode0 and $OUT/run-realnode1"
	return $rc
}

down() {
	stop_registry
	for i in 1 0; do INSTANCE=$i "$here/run.sh" stop; done
	rm -f "$DIR/env"
}

case "${1:-all}" in
all)
	trap '[[ ${KEEP:-0} == 1 ]] || down' EXIT
	up
	run_suite
	;;
up)
	# A failed `up` removes what it started (KEEP=1 leaves it for a look).
	trap 'rc=$?; [[ $rc == 0 || ${KEEP:-0} == 1 ]] || down' EXIT
	up
	;;
test) run_suite ;;
down) down ;;
net-check) "$here/net-check.sh" ;;
*) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
